// `dsgd bench collective`: times one collective over a sweep of sizes on simulated nodes
// (or MPI ranks), checks every result, and prints one row per size like nccl-tests, with
// the alpha-beta prediction beside the measurement and a loopback baseline to compare.
// Not a test: it prints figures and exits 0 even when they are slow (wrong results: 1).
// Here the flags and the printing; the sweep is bench/collective/ (collective_bench.h).
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "sim/run_flags.h"

namespace CLI {
class App;
}

namespace dsgd::cli {

struct BenchFlags {
  std::string op = "all_reduce";
  std::string algorithm = "auto";
  std::string min_bytes = "4K", max_bytes = "64M";
  double step_factor = 2;
  // kNotGiven: 20 and 5; 1 and 0 on --backend simgrid, where every iteration is the same.
  static constexpr int kNotGiven = std::numeric_limits<int>::min();
  int iters = kNotGiven;
  int warmup = kNotGiven;
  std::string reduce_op = "sum";
  int root = 0;
  std::string json;
  sim::RunFlags run;  // --backend and the cluster flags (--nodes, --latency, ...)
  bool explain = false;
  bool no_baseline = false;
};

void add_bench_command(CLI::App& app, BenchFlags& flags);
int run_bench(const BenchFlags& flags);
// The cluster a bench runs on when no flag says otherwise: 4 nodes, ideal links, 60 s.
sim::RunSpec bench_defaults();
// Prints `text` on stdout at once (a bench's rows as they come, under a pipe too).
void print_now(const std::string& text);

}  // namespace dsgd::cli
