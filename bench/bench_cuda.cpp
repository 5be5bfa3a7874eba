// bench_cuda: training speed of the CUDA device for mlp:1024,1024 on 784 inputs (Fashion-
// MNIST sized), 10 classes, batch 4096, FP32:
//  1. the device step alone (CudaMlp forward + backward + CudaSgd on one batch resident on
//     the GPU): the figure to hold against PyTorch's, which runs the same loop;
//  2. a `dsgd train` step on 1 rank (the trainer: row indices in, gather on the device,
//     loss back to the host each step);
//  3. the same trainer step on 4 simulated ranks sharing the GPU (gradients staged through
//     pinned memory and all-reduced over loopback sockets);
//  4. the CPU path (OpenBLAS, every core) and PyTorch on the same GPU (bench/torch_mlp.py
//     --device cuda), where /usr/bin/python3 has torch with CUDA.
// Prints figures and the GPU's name; asserts nothing. Exits 77 when there is no GPU.
// Usage: bench_cuda [--steps N] [--no-torch] [--no-cpu]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "cli/device_choice.h"
#include "cli/train_command.h"
#include "core/cuda/cuda_device.h"
#include "core/data/rng.h"
#include "core/nn/blas.h"
#include "core/nn/loss.h"
#include "core/nn/model.h"
#include "core/nn/sgd.h"
#include "core/train/trainer.h"
#include "sim/cluster.h"

using namespace dsgd;
using Seconds = std::chrono::duration<double>;

namespace {

const std::vector<int64_t> kSizes{784, 1024, 1024, 10};
constexpr int64_t kBatch = 4096;

double device_step_s(int steps) {
  cuda::Stream stream;
  cuda::CudaMlp mlp(kSizes, 2, stream.get());
  cuda::CudaSgd sgd({.lr = 0.01f, .momentum = 0.9f}, mlp.num_params());
  Model init(kSizes);
  init.init(0);
  DSGD_CUDA_CHECK(cudaMemcpy(mlp.values(), init.values().data(), init.values().size_bytes(),
                             cudaMemcpyHostToDevice));
  data::Rng rng(1);
  std::vector<float> x(kBatch * kSizes.front());
  std::vector<int32_t> labels(kBatch);
  for (float& v : x)
    v = static_cast<float>(rng.uniform01());
  for (auto& l : labels)
    l = static_cast<int32_t>(rng.uniform_index(kSizes.back()));
  cuda::DeviceBuffer<float> dx(x.size());
  cuda::DeviceBuffer<int32_t> dlabels(labels.size());
  DSGD_CUDA_CHECK(
      cudaMemcpy(dx.data(), x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
  DSGD_CUDA_CHECK(cudaMemcpy(dlabels.data(), labels.data(), labels.size() * sizeof(int32_t),
                             cudaMemcpyHostToDevice));
  auto step = [&] {
    mlp.forward(dx.data(), kBatch);
    mlp.backward(dx.data(), dlabels.data(), kBatch, 1.0f / kBatch);
    sgd.step(mlp.values(), mlp.grad_buffer(), stream.get());
  };
  for (int i = 0; i < std::max(steps / 10, 5); ++i)
    step();
  stream.synchronize();
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < steps; ++i)
      step();
    stream.synchronize();
    best = std::min(best, Seconds(std::chrono::steady_clock::now() - t0).count());
  }
  return best / steps;
}

// Median step time of `dsgd train` on `nodes` simulated ranks with --device cuda.
double trainer_step_s(const Dataset& data, int nodes, int steps) {
  TrainConfig config;
  config.model = ModelSpec::parse("mlp:1024,1024");
  config.global_batch = kBatch;
  config.sgd = {.lr = 0.01f, .momentum = 0.9f};
  config.steps = steps;
  config.epochs = 0;
  config.eval_every = 1000000;  // only after the last step
  sim::RunSpec spec;
  spec.device = "cuda";
  config.device = cli::make_device_factory(spec, config);
  std::vector<double> step_s;
  Clock::time_point last;
  sim::run_cluster({.nodes = nodes}, [&](Communicator& comm) {
    TrainHooks hooks;
    if (comm.rank() == 0) {
      last = Clock::now();
      hooks.on_step = [&](const StepMetrics& m) {
        const auto now = Clock::now();
        if (m.step > 5 && m.step < steps) step_s.push_back(Seconds(now - last).count());
        last = now;
      };
    }
    train(comm, data, config, nullptr, hooks);
  });
  std::sort(step_s.begin(), step_s.end());
  return step_s.empty() ? 0 : step_s[step_s.size() / 2];
}

double cpu_step_s(int steps) {
  set_blas_threads(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  Model model(kSizes);
  model.init(0);
  Sgd sgd({.lr = 0.01f, .momentum = 0.9f}, model.num_params());
  data::Rng rng(1);
  std::vector<float> x(kBatch * kSizes.front()), dout(kBatch * kSizes.back());
  std::vector<int32_t> labels(kBatch);
  for (float& v : x)
    v = static_cast<float>(rng.uniform01());
  for (auto& l : labels)
    l = static_cast<int32_t>(rng.uniform_index(kSizes.back()));
  auto step = [&] {
    model.zero_grad();
    auto out = model.forward(x.data(), kBatch);
    softmax_cross_entropy(out.data(), labels.data(), kBatch, kSizes.back(), 1.0f / kBatch,
                          dout.data());
    model.backward(x.data(), dout.data(), kBatch);
    sgd.step(model.values(), model.grads());
  };
  step();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i)
    step();
  return Seconds(std::chrono::steady_clock::now() - t0).count() / steps;
}

double torch_step_s(int steps) {
  const std::string cmd = fmt::format(
      "/usr/bin/python3 {}/bench/torch_mlp.py 784,1024,1024,10 {} {} --device cuda 2>&1",
      DSGD_SOURCE_DIR, kBatch, steps);
  std::FILE* p = popen(cmd.c_str(), "r");
  if (!p) return 0;
  char line[512] = {0};
  double v = 0;
  std::string last;
  while (std::fgets(line, sizeof line, p)) {
    if (std::sscanf(line, "samples_per_s=%lf", &v) == 1) continue;
    last = line;
  }
  pclose(p);
  if (v <= 0 && !last.empty()) fmt::print("pytorch     not available: {}", last);
  return v > 0 ? kBatch / v : 0;
}

void row(const char* what, double step_s, const std::string& note = "") {
  fmt::print("{:<34} {:>9.3f} ms/step {:>12.0f} samples/s  {}\n", what, step_s * 1e3,
             kBatch / step_s, note);
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 100;
  bool torch = true, cpu = true;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--steps") && i + 1 < argc)
      steps = std::max(10, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--no-torch"))
      torch = false;
    else if (!std::strcmp(argv[i], "--no-cpu"))
      cpu = false;
  }
  std::string why;
  if (cuda::device_count(&why) == 0) {
    fmt::print("bench_cuda: SKIPPED, no usable CUDA device ({})\n", why);
    return 77;
  }
  int version = 0;
  cudaRuntimeGetVersion(&version);
  fmt::print("== mlp:1024,1024 (784-1024-1024-10), batch {}, FP32, on {} (CUDA runtime {}.{}) ==\n",
             kBatch, cuda::device_name(0), version / 1000, version % 1000 / 10);

  const double device = device_step_s(steps);
  row("dsgd device step (1 batch on GPU)", device);
  double theirs = 0;
  if (torch) {
    theirs = torch_step_s(steps);
    if (theirs > 0)
      row("pytorch (same GPU, same loop)", theirs,
          fmt::format("dsgd/pytorch time = {:.2f}x (aim <= 1.3x)", device / theirs));
  }
  // Fashion-MNIST sized synthetic data: 16 batches per epoch.
  const Dataset data = load_dataset("synthetic:train=65536,test=2048,features=784");
  row("dsgd train, 1 rank, --device cuda", trainer_step_s(data, 1, std::max(steps / 2, 20)),
      "(trainer: indices in, loss out each step)");
  row("dsgd train, 4 ranks on 1 GPU", trainer_step_s(data, 4, std::max(steps / 5, 12)),
      "(gradients via pinned memory + sockets)");
  if (cpu) {
    const double c = cpu_step_s(3);
    row(fmt::format("dsgd CPU, {} BLAS threads", blas_threads()).c_str(), c,
        fmt::format("GPU device step is {:.0f}x faster", c / device));
  }
  return 0;
}
