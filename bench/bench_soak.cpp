// bench_soak: a long run that shows resident memory stays flat. 16 simulated nodes train
// mlp:16 on synthetic data for 10 000 synchronous steps (evaluating each epoch, reshuffling
// each epoch, one all_reduce per step over loopback TCP); rank 0 reads VmRSS from
// /proc/self/status every 500 steps. Prints a table (step, RSS MiB, steps/s over the last
// interval) and the growth from the end of warm-up (step 1000) to the end.
// Exits 1 when that growth is above --max-growth-mib (default 4 MiB): a leak of even a few
// bytes per message or per step would pass that bound over 10 000 steps x 16 nodes.
// Usage: bench_soak [--nodes N] [--steps N] [--every N] [--warmup N] [--max-growth-mib X]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/data/dataset.h"
#include "core/nn/blas.h"
#include "core/train/trainer.h"
#include "sim/cluster.h"

using namespace dsgd;
using Seconds = std::chrono::duration<double>;

namespace {

// Resident set size of this process in KiB (VmRSS in /proc/self/status), 0 if unreadable.
int64_t rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::strtoll(line.c_str() + 6, nullptr, 10);
  return 0;
}

struct Sample {
  int64_t step;
  int64_t rss_kib;
  double steps_per_s;  // over the interval since the previous sample
};

}  // namespace

int main(int argc, char** argv) {
  int nodes = 16;
  int64_t steps = 10000, every = 500, warmup = 1000;
  double max_growth_mib = 4.0;
  if (argc % 2 == 0) {  // flags come in pairs: the last one has no value
    fmt::print(stderr, "bench_soak: {} needs a value; see the comment at the top of {}\n",
               argv[argc - 1], __FILE__);
    return 2;
  }
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--nodes")
      nodes = std::atoi(value);
    else if (flag == "--steps")
      steps = std::atoll(value);
    else if (flag == "--every")
      every = std::atoll(value);
    else if (flag == "--warmup")
      warmup = std::atoll(value);
    else if (flag == "--max-growth-mib")
      max_growth_mib = std::atof(value);
    else {
      fmt::print(stderr, "bench_soak: unknown flag {}; see the comment at the top of {}\n", flag,
                 __FILE__);
      return 2;
    }
  }
  if (nodes < 1 || steps < 1 || every < 1 || warmup < 0 || warmup >= steps ||
      !(max_growth_mib > 0)) {
    fmt::print(stderr,
               "bench_soak: need nodes >= 1, steps >= 1, every >= 1, 0 <= warmup < steps, "
               "max-growth-mib > 0\n");
    return 2;
  }
  set_blas_threads(1);  // every node is a thread already

  const Dataset data = load_dataset("synthetic:train=8192,test=256");
  TrainConfig config;
  config.model = ModelSpec::parse("mlp:16");
  config.global_batch = 256;
  config.steps = steps;
  config.epochs = 0;
  config.seed = 1;

  fmt::print(
      "bench_soak: {} simulated nodes, {} on {} ({} train / {} test), global batch {}, {} steps\n",
      nodes, config.model.str(), data.name, data.train.size(), data.test.size(),
      config.global_batch, steps);
  fmt::print("{:>8} {:>10} {:>10}\n", "step", "RSS (MiB)", "steps/s");
  std::vector<Sample> samples;
  samples.push_back({0, rss_kib(), 0});
  fmt::print("{:>8} {:>10.1f} {:>10}\n", 0, samples.back().rss_kib / 1024.0, "-");
  std::fflush(stdout);
  const auto started = std::chrono::steady_clock::now();
  auto last = started;
  int64_t last_step = 0;
  TrainResult result;
  sim::run_cluster({.nodes = nodes, .timeout = std::chrono::milliseconds(120000)},
                   [&](Communicator& comm) {
                     TrainHooks hooks;
                     if (comm.rank() == 0)
                       hooks.on_step = [&](const StepMetrics& m) {
                         if (m.step % every != 0 && m.step != steps) return;
                         const auto now = std::chrono::steady_clock::now();
                         const double rate = (m.step - last_step) / Seconds(now - last).count();
                         samples.push_back({m.step, rss_kib(), rate});
                         fmt::print("{:>8} {:>10.1f} {:>10.0f}\n", m.step,
                                    samples.back().rss_kib / 1024.0, rate);
                         std::fflush(stdout);
                         last = now, last_step = m.step;
                       };
                     TrainResult r = train(comm, data, config, nullptr, hooks);
                     if (comm.rank() == 0) result = std::move(r);
                   });
  const double total_s = Seconds(std::chrono::steady_clock::now() - started).count();

  // Growth after warm-up: the first sample at or after `warmup` to the last one.
  const Sample* from = nullptr;
  for (const Sample& s : samples)
    if (s.step >= warmup) {
      from = &s;
      break;
    }
  const Sample& to = samples.back();
  const double growth_mib = (to.rss_kib - from->rss_kib) / 1024.0;
  int64_t peak_kib = 0;
  for (const Sample& s : samples)
    peak_kib = std::max(peak_kib, s.rss_kib);
  fmt::print("final loss {:.4f}, test accuracy {:.2f} %, {:.1f} s ({:.0f} steps/s overall)\n",
             result.final_loss, result.test_accuracy.value_or(0) * 100, total_s, steps / total_s);
  fmt::print("RSS at step {} {:.1f} MiB, at step {} {:.1f} MiB, peak {:.1f} MiB\n", from->step,
             from->rss_kib / 1024.0, to.step, to.rss_kib / 1024.0, peak_kib / 1024.0);
  const bool flat = growth_mib <= max_growth_mib;
  fmt::print("growth after warm-up {:+.2f} MiB (bound {:.1f} MiB): {}\n", growth_mib,
             max_growth_mib, flat ? "flat" : "GROWING");
  return flat ? 0 : 1;
}
