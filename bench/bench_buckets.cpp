// bench_buckets: what DDP's gradient buckets and their overlap with backward do to a step.
// 2 and 8 simulated nodes train an MLP on Fashion-MNIST (784 inputs; synthetic data of the
// same shape where the dataset is not installed), 256 rows per node, with one all_reduce
// after backward, then with bucket caps of 25 MB (DDP's default), 4 MB and 1 MB, over two
// networks. Prints, per run, the buckets, model time and wall time per step (steps 2 to N-1:
// after the first step's connections, before the last one's evaluation) and the final loss,
// which only the all_reduce's rounding may change. Wall time shows the overlap only where
// every node has a core of its own (2 nodes on 2 cores); model time shows it at any size.
// Prints figures; asserts nothing. Usage: bench_buckets [--steps N] [--model SPEC]
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "core/train/trainer.h"
#include "sim/cluster.h"

using namespace dsgd;

namespace {

struct Network {
  const char* name;
  double latency_s, bandwidth_Bps;
};

struct Figures {
  std::string buckets;
  double model_ms = 0, wall_ms = 0, loss = 0;
};

Figures run(const Dataset& data, TrainConfig config, int nodes, const Network& net, double cap_mb) {
  sim::ClusterOptions options{.nodes = nodes, .timeout = std::chrono::minutes(5)};
  config.global_batch = 256 * nodes;
  options.network.link = {.latency_s = net.latency_s, .bandwidth_Bps = net.bandwidth_Bps};
  config.bucket_bytes = cap_mb > 0 ? bucket_cap_bytes(cap_mb) : 0;
  Figures f;
  std::vector<StepMetrics> steps;
  options.pairs = static_cast<int64_t>(training_pairs(config, data, options.nodes).size());
  sim::run_cluster(options, [&](Communicator& comm) {
    TrainHooks hooks;
    if (comm.rank() == 0) hooks.on_step = [&](const StepMetrics& m) { steps.push_back(m); };
    const TrainResult r = train(comm, data, config, nullptr, hooks);
    if (comm.rank() == 0) f.buckets = r.buckets.empty() ? "one all_reduce" : r.buckets;
  });
  const double n = double(steps.size() - 2);  // steps 2 .. N-1: the last also evaluates
  f.model_ms = (steps[steps.size() - 2].model_s - steps[0].model_s) / n * 1e3;
  f.wall_ms = (steps[steps.size() - 2].wall_s - steps[0].wall_s) / n * 1e3;
  f.loss = steps.back().loss;
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bench_buckets: DDP's buckets and overlap on simulated nodes"};
  int64_t steps = 8;
  std::string model = "mlp:1024,1024,1024";
  app.add_option("--steps", steps, "Steps per run (at least 4)")->capture_default_str();
  app.add_option("--model", model, "The model")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  const bool fashion = std::filesystem::exists("/usr/share/datasets/fashion-mnist");
  const Dataset data = load_dataset(fashion ? "fashion-mnist" : "synthetic:features=784");
  TrainConfig config;
  config.model = ModelSpec::parse(model);
  config.steps = std::max<int64_t>(steps, 4);
  config.epochs = 0;
  config.eval_every = 1'000'000;
  config.allreduce = Algorithm::ring;
  fmt::print("{} on {}, 256 rows per node, ring all_reduce, {} steps, 20 GFLOP/s nodes\n", model,
             data.name, config.steps);
  fmt::print("{:>5} {:<16} {:>6} {:>36} {:>14} {:>13} {:>7}\n", "nodes", "network", "cap",
             "buckets", "model ms/step", "wall ms/step", "loss");
  for (int nodes : {2, 8}) {
    for (const Network& net :
         {Network{"0.5 ms, 1 Gbit/s", 0.0005, 125e6}, Network{"5 ms, 100 Mbit/s", 0.005, 12.5e6}}) {
      for (double cap : {0.0, 25.0, 4.0, 1.0}) {
        const Figures f = run(data, config, nodes, net, cap);
        fmt::print("{:>5} {:<16} {:>6} {:>36} {:>14.1f} {:>13.1f} {:>7.4f}\n", nodes, net.name,
                   cap > 0 ? fmt::format("{:g} MB", cap) : "-", f.buckets, f.model_ms, f.wall_ms,
                   f.loss);
        std::fflush(stdout);
      }
    }
  }
}
