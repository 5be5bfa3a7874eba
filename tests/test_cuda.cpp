// The CUDA device against the CPU: CudaMlp's logits and gradients against Model on the same
// input, the device SGD against Sgd, and whole training runs (1 and 4 simulated ranks,
// staged, direct and NCCL gradient paths) against the CPU run after 50 steps. Built only with
// CUDA; its own main (test_cuda_main.cpp) exits 77 (CTest: skipped) when there is no GPU.
#include <catch2/catch.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <vector>

#include "cli/device_choice.h"
#include "cli/train_command.h"
#include "core/cuda/cuda_device.h"
#include "core/nn/loss.h"
#include "core/nn/model.h"
#include "core/train/trainer.h"
#include "sim/cluster.h"
#include "skip.h"
#include "param_diff.h"

using namespace dsgd;
using namespace dsgd::cuda;

namespace {

std::vector<float> random_floats(size_t count, uint32_t seed, float lo = -1, float hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(count);
  for (float& x : v)
    x = u(rng);
  return v;
}

template <class T>
DeviceBuffer<T> to_device(const std::vector<T>& host) {
  DeviceBuffer<T> d(host.size());
  DSGD_CUDA_CHECK(
      cudaMemcpy(d.data(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

std::vector<float> to_host(const float* device, size_t count) {
  std::vector<float> h(count);
  DSGD_CUDA_CHECK(cudaMemcpy(h.data(), device, count * sizeof(float), cudaMemcpyDeviceToHost));
  return h;
}

// |a - b| <= abs + rel |b| elementwise; reports the first miss.
void require_close(const std::vector<float>& a, std::span<const float> b, double rel, double abs,
                   const char* what) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO(what << "[" << i << "]: cuda " << a[i] << ", cpu " << b[i]);
    REQUIRE(std::abs(double(a[i]) - double(b[i])) <= abs + rel * std::abs(double(b[i])));
  }
}

TrainResult train_with(const std::string& device, int nodes, const Dataset& data,
                       TrainConfig config, const std::string& allreduce = "auto") {
  sim::RunSpec spec;
  spec.device = device;
  spec.nccl = allreduce == "nccl";
  spec.allreduce = spec.nccl ? Algorithm::automatic : parse_algorithm(allreduce);
  config.device = cli::make_device_factory(spec, config);
  TrainResult result;
  sim::run_cluster({.nodes = nodes}, [&](Communicator& comm) {
    TrainResult r = train(comm, data, config);
    if (comm.rank() == 0) result = std::move(r);
  });
  return result;
}

}  // namespace

TEST_CASE("CudaMlp logits and gradients equal the CPU Model's on the same input", "[cuda]") {
  const std::vector<int64_t> sizes{20, 16, 12, 5};
  const int64_t n = 37, classes = sizes.back();
  Model cpu(sizes, 2);
  cpu.init(3);
  const std::vector<float> x = random_floats(n * sizes.front(), 1);
  std::vector<int32_t> labels(n);
  for (int64_t i = 0; i < n; ++i)
    labels[i] = static_cast<int32_t>((i * 7) % classes);
  const float scale = 1.0f / 50;  // as a rank holding 37 rows of a global batch of 50

  cpu.zero_grad();
  auto out = cpu.forward(x.data(), n);
  const std::vector<float> logits(out.begin(), out.end());
  std::vector<float> dout(n * classes);
  const LossSum s =
      softmax_cross_entropy(out.data(), labels.data(), n, classes, scale, dout.data());
  cpu.backward(x.data(), dout.data(), n);

  Stream stream;
  CudaMlp gpu(sizes, 2, stream.get());
  DSGD_CUDA_CHECK(cudaMemcpy(gpu.values(), cpu.values().data(), cpu.values().size_bytes(),
                             cudaMemcpyHostToDevice));
  auto dx = to_device(x);
  auto dlabels = to_device(labels);
  const float* dlogits = gpu.forward(dx.data(), n);
  gpu.backward(dx.data(), dlabels.data(), n, scale);
  stream.synchronize();

  require_close(to_host(dlogits, n * classes), logits, 1e-5, 1e-6, "logits");
  const std::vector<float> grads = to_host(gpu.grad_buffer(), gpu.grad_buffer_size());
  const std::vector<float> param_grads(grads.begin(), grads.begin() + gpu.num_params());
  require_close(param_grads, cpu.grads(), 1e-4, 1e-6, "grads");
  CHECK(grads[gpu.num_params()] == Approx(s.loss).epsilon(1e-5));       // loss sum slot
  CHECK(grads[gpu.num_params() + 1] == static_cast<float>(s.correct));  // correct count slot

  // The evaluation path sums the same loss without gradients.
  DeviceBuffer<double> acc(2);
  DSGD_CUDA_CHECK(cudaMemset(acc.data(), 0, 2 * sizeof(double)));
  gpu.evaluate(dx.data(), dlabels.data(), n, acc.data());
  stream.synchronize();
  double host_acc[2];
  DSGD_CUDA_CHECK(cudaMemcpy(host_acc, acc.data(), sizeof host_acc, cudaMemcpyDeviceToHost));
  CHECK(host_acc[0] == Approx(s.loss).epsilon(1e-5));
  CHECK(host_acc[1] == double(s.correct));
}

TEST_CASE("CudaSgd takes torch.optim.SGD's steps, bit for bit with the CPU Sgd", "[cuda]") {
  const SgdOptions cases[] = {
      {.lr = 0.1f},
      {.lr = 0.05f, .momentum = 0.9f, .weight_decay = 1e-3f},
      {.lr = 0.05f, .momentum = 0.9f, .dampening = 0.3f},
      {.lr = 0.01f, .momentum = 0.8f, .weight_decay = 5e-4f, .nesterov = true},
  };
  const int64_t count = 1000;
  for (const SgdOptions& o : cases) {
    INFO("lr " << o.lr << " momentum " << o.momentum << " dampening " << o.dampening
               << " weight decay " << o.weight_decay << " nesterov " << o.nesterov);
    std::vector<float> p = random_floats(count, 5);
    Sgd cpu(o, count);
    CudaSgd gpu(o, count);
    Stream stream;
    auto dp = to_device(p);
    for (uint32_t step = 0; step < 3; ++step) {
      const std::vector<float> g = random_floats(count, 10 + step);
      cpu.step(p, g);
      auto dg = to_device(g);
      gpu.step(dp.data(), dg.data(), stream.get());
      stream.synchronize();
    }
    const std::vector<float> got = to_host(dp.data(), count);
    for (int64_t i = 0; i < count; ++i) {
      INFO("p[" << i << "]");
      REQUIRE(got[i] == p[i]);
    }
  }
}

TEST_CASE("training on cuda matches the CPU after 50 steps, 1 and 4 simulated ranks", "[cuda]") {
  const Dataset data = load_dataset("synthetic:train=2048,test=512");
  TrainConfig config;
  config.model = ModelSpec::parse("mlp:64,32");
  config.global_batch = 128;
  config.sgd = {.lr = 0.1f, .momentum = 0.9f, .weight_decay = 1e-4f};
  config.steps = 50;
  config.epochs = 0;
  config.seed = 7;
  for (int nodes : {1, 4}) {
    INFO(nodes << " simulated ranks");
    const TrainResult cpu = train_with("cpu", nodes, data, config);
    const TrainResult gpu = train_with("cuda", nodes, data, config);
    const double rel = max_rel_diff(gpu.params, cpu.params);
    INFO("max relative difference " << rel);
    CHECK(rel <= 1e-4);
    CHECK(gpu.final_loss == Approx(cpu.final_loss).epsilon(1e-4));
    REQUIRE(gpu.test_accuracy.has_value());
    CHECK(std::abs(*gpu.test_accuracy - *cpu.test_accuracy) <= 2.0 / 512);
  }
}

TEST_CASE("a rank with no rows in a step contributes zeros on cuda", "[cuda]") {
  const Dataset data = load_dataset("synthetic:train=256,test=64");
  TrainConfig config;
  config.model = ModelSpec::parse("mlp:16");
  config.global_batch = 3;  // 4 ranks: rank 3 has no row
  config.steps = 10;
  config.epochs = 0;
  const TrainResult cpu = train_with("cpu", 4, data, config);
  const TrainResult gpu = train_with("cuda", 4, data, config);
  CHECK(max_rel_diff(gpu.params, cpu.params) <= 1e-4);
}

TEST_CASE("CUDA and cuBLAS failures throw CudaError naming the call", "[cuda]") {
  try {
    DSGD_CUDA_CHECK(cudaSetDevice(100000));
    FAIL("cudaSetDevice(100000) succeeded");
  } catch (const CudaError& e) {
    CHECK(e.call() == "cudaSetDevice");
    CHECK_THAT(e.what(), Catch::Contains("cudaSetDevice failed"));
  }
  try {
    DeviceBuffer<float> huge(size_t{1} << 46);  // 256 TiB
    FAIL("a 256 TiB cudaMalloc succeeded");
  } catch (const CudaError& e) {
    CHECK(e.call() == "cudaMalloc");
    CHECK_THAT(e.what(), Catch::Contains("smaller --batch"));
  }
  try {
    Stream stream;
    Cublas blas(stream.get());
    blas.sgemm(CUBLAS_OP_N, CUBLAS_OP_N, -1, 1, 1, 1.0f, nullptr, 1, nullptr, 1, 0.0f, nullptr, 1);
    FAIL("cublasSgemm with m = -1 succeeded");
  } catch (const CudaError& e) {
    CHECK(e.call() == "cublasSgemm");
    CHECK_THAT(e.what(), Catch::Contains("CUBLAS_STATUS_INVALID_VALUE"));
  }
}

TEST_CASE("device cuda:K past the last GPU is a usage error", "[cuda]") {
  sim::RunSpec flags;
  flags.device = "cuda:4096";
  CHECK_THROWS_AS(cli::make_device_factory(flags, TrainConfig{}), UsageError);
  flags.device = "cuda";
  TrainConfig linear;
  linear.model = ModelSpec::parse("linear");
  CHECK_THROWS_AS(cli::make_device_factory(flags, linear), UsageError);
}

#ifdef DSGD_HAVE_NCCL
namespace {

TrainConfig nccl_config() {
  TrainConfig config;
  config.model = ModelSpec::parse("mlp:64,32");
  config.global_batch = 128;
  config.sgd = {.lr = 0.1f, .momentum = 0.9f};
  config.steps = 50;
  config.epochs = 0;
  config.seed = 11;
  return config;
}

}  // namespace

TEST_CASE("allreduce nccl matches the CPU after 50 steps, one rank per GPU", "[cuda][nccl]") {
  std::string why_not;
  const std::string version = nccl_version(&why_not);
  if (version.empty()) FAIL("NCCL was found at build time but does not load: " << why_not);
  const Dataset data = load_dataset("synthetic:train=2048,test=512");
  const TrainConfig config = nccl_config();
  // One rank: a communicator of one, so a single GPU runs NCCL's path end to end. With
  // more GPUs, one rank on each (up to 4).
  const int nodes = std::min(device_count(), 4);
  INFO(nodes << " simulated ranks, NCCL " << version);
  const TrainResult cpu = train_with("cpu", nodes, data, config);
  const TrainResult gpu = train_with("cuda", nodes, data, config, "nccl");
  CHECK(gpu.gradient_reducer == "NCCL " + version);
  const double rel = max_rel_diff(gpu.params, cpu.params);
  INFO("max relative difference " << rel);
  CHECK(rel <= 1e-4);
  CHECK(gpu.final_loss == Approx(cpu.final_loss).epsilon(1e-4));
  if (nodes > 1) CHECK(gpu.bytes_sent < cpu.bytes_sent);  // gradients did not cross sockets
}

TEST_CASE("an NCCL rank whose peer never joins times out instead of hanging", "[cuda][nccl]") {
  DSGD_CUDA_CHECK(cudaSetDevice(0));
  const auto t0 = std::chrono::steady_clock::now();
  // Rank 0 of 2 alone: init waits for rank 1 until the deadline, then aborts.
  CHECK_THROWS_AS(NcclComm(nccl_unique_id(), 2, 0, std::chrono::milliseconds(1500)), TimeoutError);
  const auto took = std::chrono::steady_clock::now() - t0;
  CHECK(took >= std::chrono::milliseconds(1500));
  CHECK(took < std::chrono::seconds(15));
}

TEST_CASE("an NCCL rank stops waiting once the backend says the run failed", "[cuda][nccl]") {
  DSGD_CUDA_CHECK(cudaSetDevice(0));
  const auto t0 = std::chrono::steady_clock::now();
  // Rank 1 never joins; 0.3 s in, the backend reports it lost (as a crash fault would).
  NcclComm::FailureProbe probe = [t0] {
    return std::chrono::steady_clock::now() - t0 > std::chrono::milliseconds(300)
               ? std::string("rank 1: crashed")
               : std::string();
  };
  try {
    NcclComm comm(nccl_unique_id(), 2, 0, std::chrono::seconds(60), probe);
    FAIL("rank 0 of 2 joined alone");
  } catch (const TimeoutError& e) {
    FAIL("waited for the deadline instead: " << e.what());
  } catch (const CommError& e) {
    CHECK_THAT(e.what(), Catch::Contains("rank 1: crashed"));
  }
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(15));
}

TEST_CASE("allreduce nccl with two ranks on one GPU is a usage error on every rank",
          "[cuda][nccl]") {
  const Dataset data = load_dataset("synthetic:train=256,test=64");
  TrainConfig config = nccl_config();
  config.steps = 2;
  // cuda:0 pins both simulated ranks to one GPU, whatever the machine has.
  CHECK_THROWS_WITH(train_with("cuda:0", 2, data, config, "nccl"),
                    Catch::Contains("ranks 0 and 1 are on the same GPU"));
  // auto on simulated nodes never picks NCCL: the gradients cross the simulated network.
  const TrainResult shared = train_with("cuda:0", 2, data, config, "auto");
  CHECK(shared.gradient_reducer.empty());
}
#else
TEST_CASE("allreduce nccl, its deadlines and its refusals", "[cuda][nccl]") {
  DSGD_SKIP_UNLESS("nccl", false, "dsgd was built without NCCL (no nccl.h at configure time)");
}
#endif
