// bench_train: training speed figures for the README.
//  1. One rank, mlp:128 on Fashion-MNIST-sized input (784 -> 128 -> 10), batch 256:
//     samples/s of forward + backward + SGD, and PyTorch's for the same model, batch and
//     one thread (when Debian's python3-torch is installed), with the ratio.
//  2. The median time of one synchronous step on 4 simulated nodes (forward, backward,
//     all_reduce, update) for a 64-32-10 MLP at global batch 256.
// Prints figures; asserts nothing. Usage: bench_train [--steps N] [--no-torch]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

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

double dsgd_samples_per_s(const std::vector<int64_t>& sizes, int64_t batch, int steps) {
  Model model(sizes);
  model.init(0);
  Sgd sgd({.lr = 0.01f, .momentum = 0.9f}, model.num_params());
  data::Rng rng(1);
  std::vector<float> x(batch * sizes.front()), dout(batch * sizes.back());
  std::vector<int32_t> labels(batch);
  for (float& v : x)
    v = static_cast<float>(rng.uniform01());
  for (auto& l : labels)
    l = static_cast<int32_t>(rng.uniform_index(sizes.back()));
  auto step = [&] {
    model.zero_grad();
    auto out = model.forward(x.data(), batch);
    softmax_cross_entropy(out.data(), labels.data(), batch, sizes.back(), 1.0f / batch,
                          dout.data());
    model.backward(x.data(), dout.data(), batch);
    sgd.step(model.values(), model.grads());
  };
  for (int i = 0; i < std::max(steps / 10, 5); ++i)
    step();
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < steps; ++i)
      step();
    best = std::min(best, Seconds(std::chrono::steady_clock::now() - t0).count());
  }
  return batch * steps / best;
}

double torch_samples_per_s(const std::string& sizes, int64_t batch, int steps) {
  const std::string cmd = fmt::format("/usr/bin/python3 {}/bench/torch_mlp.py {} {} {} 2>/dev/null",
                                      DSGD_SOURCE_DIR, sizes, batch, steps);
  std::FILE* p = popen(cmd.c_str(), "r");
  if (!p) return 0;
  char line[256] = {0};
  double v = 0;
  while (std::fgets(line, sizeof line, p))
    if (std::sscanf(line, "samples_per_s=%lf", &v) == 1) break;
  pclose(p);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 300;
  bool torch = true;
  bool no_torch = false;
  CLI::App app{"Training throughput: dsgd against PyTorch, and one synchronous step on 4 nodes"};
  app.add_option("--steps", steps, "SGD steps timed per measurement")
      ->check(CLI::Range(1, 1000000));
  app.add_flag("--no-torch", no_torch, "Skip the PyTorch comparison");
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "bench_train: {}; see bench_train --help\n", e.what());
    return 2;
  }
  torch = !no_torch;
  set_blas_threads(1);

  fmt::print("== 1 rank, mlp:128 (784-128-10), batch 256, 1 thread ==\n");
  const double ours = dsgd_samples_per_s({784, 128, 10}, 256, steps);
  fmt::print("dsgd     {:>10.0f} samples/s  ({:.3f} ms/step)\n", ours, 256e3 / ours);
  if (torch) {
    const double theirs = torch_samples_per_s("784,128,10", 256, steps);
    if (theirs > 0)
      fmt::print("pytorch  {:>10.0f} samples/s  ({:.3f} ms/step)\nratio    {:>10.2f}x PyTorch\n",
                 theirs, 256e3 / theirs, ours / theirs);
    else
      fmt::print("pytorch  not available (apt-get install python3-torch)\n");
  }

  fmt::print("\n== 4 simulated nodes, 64-32-10 MLP, global batch 256, ring all_reduce ==\n");
  const Dataset data = load_dataset("synthetic:train=8192,test=256,features=64");
  TrainConfig config;
  config.model = ModelSpec::parse("mlp:32");
  config.steps = 2000;
  config.epochs = 0;
  config.eval_every = 1000000;  // evaluate only after the last step
  config.allreduce = Algorithm::ring;
  std::vector<double> step_s;
  step_s.reserve(config.steps);
  Clock::time_point last;
  sim::run_cluster({.nodes = 4}, [&](Communicator& comm) {
    TrainHooks hooks;
    if (comm.rank() == 0) {
      last = Clock::now();
      hooks.on_step = [&](const StepMetrics& m) {
        const auto now = Clock::now();
        if (m.step < config.steps) step_s.push_back(Seconds(now - last).count());
        last = now;
      };
    }
    train(comm, data, config, nullptr, hooks);
  });
  std::vector<double> sorted(step_s.begin() + 100, step_s.end());  // skip warm-up
  std::sort(sorted.begin(), sorted.end());
  auto pct = [&](double q) { return sorted[static_cast<size_t>(q * (sorted.size() - 1))]; };
  fmt::print("step time median {:.3f} ms, p10 {:.3f} ms, p90 {:.3f} ms over {} steps\n",
             pct(0.5) * 1e3, pct(0.1) * 1e3, pct(0.9) * 1e3, sorted.size());
  return 0;
}
