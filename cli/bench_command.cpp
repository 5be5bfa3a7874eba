// `dsgd bench collective`: flags, the sweep of sizes, timing, the table and the JSON rows.
// R = world size. Per size: warm-up and timed iterations, each started at one agreed
// instant on every rank (start_together) and followed by a check of every element; the
// time of a size is the median of the timed iterations on each rank, then the maximum over
// ranks (the slowest rank decides when a collective is done).
// algbw = bytes / time, busbw = algbw * the nccl-tests factor of the op.
#include "cli/bench_command.h"

#include <sys/prctl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/backend.h"
#include "cli/bench_case.h"
#include "cli/loopback_baseline.h"
#include "core/comm/cost_model.h"
#include "core/errors.h"
#include "core/io/atomic_file.h"
#include "sim/cluster.h"
#include "sim/link_model.h"
#include "sim/network.h"

namespace dsgd::cli {
namespace {

constexpr uint64_t kMaxBenchBytes = uint64_t(1) << 30;
constexpr double kStartMarginS = 1e-3;      // beyond the link latencies, for the transport
constexpr double kSpinBeforeStartS = 2e-3;  // start_together yields, not sleeps, this last
constexpr double kRunWarmupS = 0.5;         // untimed iterations before the first size
constexpr uint64_t kBaselineFromBytes = uint64_t(1) << 20;  // the ratio column starts here
constexpr uint64_t kLoopBufferMax = uint64_t(64) << 20;     // each loopback flow's buffers

struct Row {
  uint64_t bytes = 0, count = 0;
  Algorithm algorithm = Algorithm::automatic;
  double time_us = 0, algbw_GBps = 0, busbw_GBps = 0;
  std::optional<double> predicted_us, error_pct;
  std::optional<double> loopback_GBps, vs_loopback_pct;  // sim, from kBaselineFromBytes
  std::optional<double> bare_us, overhead_pct;           // --backend mpi --algorithm native
  uint64_t wrong = 0;
};

// Everything a run needs, checked before any node starts.
struct Plan {
  CollectiveOp op;
  Algorithm requested;
  ReduceOp reduce_op;
  int root;
  std::vector<uint64_t> sizes;
  sim::LinkSpec link;
  int iters, warmup;
  std::shared_ptr<LoopbackRing> loopback;  // sim: timed beside each iteration
  BareAllReduce bare;  // the backend's own all_reduce, timed beside dsgd's (MPI, native)
};

// nccl-tests' busbw factors: what each rank's link carries relative to the buffer size.
double bus_factor(CollectiveOp op, int world) {
  const double n = world;
  switch (op) {
    case CollectiveOp::all_reduce:
      return 2 * (n - 1) / n;
    case CollectiveOp::all_gather:
    case CollectiveOp::reduce_scatter:
    case CollectiveOp::gather:
    case CollectiveOp::scatter:
      return (n - 1) / n;
    case CollectiveOp::broadcast:
    case CollectiveOp::reduce:
      return 1;
    case CollectiveOp::barrier:
      return 0;
  }
  return 1;
}

bool ideal(const sim::LinkSpec& link) {
  return link.latency_s == 0 && link.bandwidth_Bps == 0;
}

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (bytes >= 1024 && u < 3)
    bytes /= 1024, ++u;
  return u == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.4g} {}", bytes, units[u]);
}

std::string link_text(const sim::LinkSpec& link) {
  return fmt::format("latency {}, bandwidth {}", sim::format_duration(link.latency_s),
                     link.bandwidth_Bps > 0 ? sim::format_bandwidth(link.bandwidth_Bps)
                                            : std::string("unlimited"));
}

std::vector<uint64_t> size_sweep(CollectiveOp op, uint64_t min_bytes, uint64_t max_bytes,
                                 double factor) {
  if (op == CollectiveOp::barrier) return {0};
  std::vector<uint64_t> sizes;
  for (double s = static_cast<double>(min_bytes); s <= static_cast<double>(max_bytes);) {
    sizes.push_back(static_cast<uint64_t>(s));
    s = std::max(s + sizeof(float), std::ceil(s * factor));
  }
  return sizes;
}

// --explain: each algorithm's steps and bytes for the op, world and the largest size.
void explain(const Plan& plan, int world, uint64_t bytes) {
  const bool nominal = ideal(plan.link);
  const double alpha = nominal ? kAutoAlphaS : plan.link.latency_s;
  const double bandwidth = nominal ? kAutoBandwidthBps : plan.link.bandwidth_Bps;
  fmt::print("# {} on {} ranks, {} ({} B)\n", to_string(plan.op), world, human_bytes(bytes), bytes);
  fmt::print("# predictions for {}{}\n",
             link_text({.latency_s = alpha, .bandwidth_Bps = bandwidth}),
             nominal ? " (the nominal link auto assumes; set --latency/--bandwidth)" : "");
  fmt::print(
      "# link model: each directed link has its own latency a and bandwidth B; messages\n"
      "# on different links overlap, so time = steps * a + critical path bytes / B\n");
  fmt::print("# {:<17} {:>5} {:>14} {:>14} {:>12}  {}\n", "algorithm", "steps", "busiest sends",
             "critical path", "predicted", "formula (S = bytes, R = ranks)");
  std::vector<Algorithm> algorithms;
  if (plan.op == CollectiveOp::all_reduce)
    algorithms = {Algorithm::naive, Algorithm::ring, Algorithm::tree, Algorithm::halving_doubling};
  else
    algorithms = {resolve_algorithm(plan.op, Algorithm::automatic, world, bytes)};
  for (Algorithm a : algorithms) {
    const Cost c = collective_cost(plan.op, a, world, bytes);
    fmt::print("  {:<17} {:>5} {:>14} {:>14} {:>9.1f} us  {}\n",
               plan.op == CollectiveOp::all_reduce ? to_string(a) : algorithm_label(plan.op, a),
               c.steps, human_bytes(c.bytes_sent_per_rank), human_bytes(c.critical_path_bytes),
               c.predict_s(alpha, bandwidth) * 1e6, cost_formula(plan.op, a));
  }
  if (plan.op == CollectiveOp::all_reduce)
    fmt::print("# auto picks {} for this world and size\n",
               to_string(resolve_algorithm(plan.op, Algorithm::automatic, world, bytes)));
}

void print_header(const Plan& plan, const BenchFlags& f, int world) {
  fmt::print("# dsgd bench collective: {}{}, algorithm {}, {} {} ranks, root {}\n",
             to_string(plan.op),
             plan.op == CollectiveOp::all_reduce || plan.op == CollectiveOp::reduce ||
                     plan.op == CollectiveOp::reduce_scatter
                 ? fmt::format(" ({})", to_string(plan.reduce_op))
                 : "",
             to_string(plan.requested), world, f.run.backend, plan.root);
  fmt::print(
      "# link: {}; {} warm-up + {} timed iterations per size (and the first size's warm-up lasts "
      "{} s at least), every result checked\n",
      link_text(plan.link), plan.warmup, plan.iters, kRunWarmupS);
  fmt::print(
      "# time: from a start common to all ranks (each yields until it), median over iterations "
      "on each rank, maximum over ranks\n");
  if (plan.bare)
    fmt::print(
        "# bare: MPI_Allreduce called directly in the same run on the same buffer, refilled first, "
        "iterations alternating with dsgd's (bare: median, maximum over ranks);\n"
        "# overhead: each rank's median of the paired ratio dsgd / bare - 1 over the "
        "iterations, averaged over ranks\n");
  if (plan.loopback)
    fmt::print(
        "# loop: from 1 MiB, beside each iteration (before it or after, in turn), {} TCP flows on "
        "127.0.0.1 in a ring each carry what one rank sends (busbw x time), from and into "
        "buffers of the collective's size (at most 64 MiB), all at once, until the last is "
        "done;\n# loop is their median GB/s per flow, busbw/loop the median of the "
        "paired ratios\n",
        plan.loopback->flows());
  fmt::print("#\n# {:>10} {:>10} {:>16} {:>11} {:>7} {:>7} {:>11} {:>7} {:>7} {:>9} {:>7}{}\n",
             "size", "count", "algorithm", "time", "algbw", "busbw", "predicted", "error", "loop",
             "busbw/", "wrong", plan.bare ? fmt::format(" {:>11} {:>9}", "bare", "overhead") : "");
  fmt::print("# {:>10} {:>10} {:>16} {:>11} {:>7} {:>7} {:>11} {:>7} {:>7} {:>9} {:>7}{}\n", "(B)",
             "(floats)", "", "(us)", "(GB/s)", "(GB/s)", "(us)", "(%)", "(GB/s)", "loop (%)", "",
             plan.bare ? fmt::format(" {:>11} {:>9}", "(us)", "(%)") : "");
  std::fflush(stdout);
}

void print_row(const Row& r) {
  auto opt = [](const std::optional<double>& v, const char* format) {
    return v ? fmt::format(fmt::runtime(format), *v) : std::string("-");
  };
  fmt::print(
      "  {:>10} {:>10} {:>16} {:>11.1f} {:>7.3f} {:>7.3f} {:>11} {:>7} {:>7} {:>9} {:>7}{}\n",
      r.bytes, r.count, to_string(r.algorithm), r.time_us, r.algbw_GBps, r.busbw_GBps,
      opt(r.predicted_us, "{:.1f}"), opt(r.error_pct, "{:+.1f}"), opt(r.loopback_GBps, "{:.3f}"),
      opt(r.vs_loopback_pct, "{:.0f}"), r.wrong,
      r.bare_us ? fmt::format(" {:>11.1f} {:>+9.1f}", *r.bare_us, r.overhead_pct.value_or(0)) : "");
  std::fflush(stdout);
}

nlohmann::ordered_json to_json(const Plan& plan, const BenchFlags& f, int world,
                               const std::vector<Row>& rows) {
  auto opt = [](const std::optional<double>& v) {
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
  };
  nlohmann::ordered_json j;
  j["op"] = to_string(plan.op);
  j["reduce_op"] = to_string(plan.reduce_op);
  j["algorithm"] = to_string(plan.requested);
  j["backend"] = f.run.backend;
  j["nodes"] = world;
  j["root"] = plan.root;
  j["iters"] = plan.iters;
  j["warmup"] = plan.warmup;
  j["latency_s"] = plan.link.latency_s;
  j["bandwidth_Bps"] = plan.link.bandwidth_Bps;
  if (plan.loopback)
    j["loopback_baseline"] = {{"flows", plan.loopback->flows()},
                              {"from_bytes", kBaselineFromBytes},
                              {"paired", "a round beside each timed iteration"}};
  else
    j["loopback_baseline"] = nullptr;
  uint64_t wrong = 0;
  j["rows"] = nlohmann::ordered_json::array();
  for (const Row& r : rows) {
    wrong += r.wrong;
    j["rows"].push_back({{"bytes", r.bytes},
                         {"count", r.count},
                         {"algorithm", to_string(r.algorithm)},
                         {"time_us", r.time_us},
                         {"algbw_GBps", r.algbw_GBps},
                         {"busbw_GBps", r.busbw_GBps},
                         {"predicted_us", opt(r.predicted_us)},
                         {"error_pct", opt(r.error_pct)},
                         {"loopback_GBps", opt(r.loopback_GBps)},
                         {"busbw_vs_loopback_pct", opt(r.vs_loopback_pct)},
                         {"bare_us", opt(r.bare_us)},
                         {"overhead_pct", opt(r.overhead_pct)},
                         {"wrong", r.wrong}});
  }
  j["wrong"] = wrong;
  return j;
}

// Starts every rank's next collective at the same instant of the run's common clock and
// returns it. A barrier alone does not: ranks leave it up to one latency apart when they
// entered it unevenly (after naive, rank 0 is a latency ahead), and the early ones would be
// charged the wait. Instead rank 0 names a start `lead_s` ahead once all have arrived, and
// each rank sleeps until then; a rank that hears of it late is charged the delay.
double start_together(Communicator& comm, double lead_s) {
  barrier(comm);
  std::array<float, 2> message{};  // a double, bit for bit
  if (comm.rank() == 0) message = std::bit_cast<std::array<float, 2>>(comm.wall_s() + lead_s);
  broadcast(comm, message, 0);
  const double start_s = std::bit_cast<double>(message);
  // Yield until the start, sleeping only when it is further off: a thread woken from sleep
  // runs some 50 us late here, and a virtual CPU that went idle is slow to come back
  // (4 KiB on 4 nodes measured 180-200 us after a sleep, 145-150 us after yielding), which
  // would be charged to the collective. Yielding leaves the cores to whoever needs them.
  const double wait_s = start_s - kSpinBeforeStartS - comm.wall_s();
  if (wait_s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(wait_s));
  while (comm.wall_s() < start_s)
    std::this_thread::yield();
  return start_s;
}

// Before the first size: untimed iterations until kRunWarmupS have passed on rank 0, which
// tells the others each time whether to go on. A run's first collectives are slower: on
// the build machine (a VM), 4 KiB on 4 nodes takes 185-210 us for its first hundred or so
// iterations and about 100 us after that, and the idle cores waking slowly are the likely
// cause. The --warmup iterations of every size come after this.
void warm_up_run(Communicator& comm, BenchCase& bench, const CollectiveOptions& options,
                 double lead_s) {
  const double begin_s = comm.wall_s();
  for (std::array<float, 1> go{1}; go[0] != 0;) {
    bench.reset();
    start_together(comm, lead_s);
    bench.run(comm, options);
    bench.count_wrong();  // as a timed iteration does; a wrong result counts there
    go[0] = comm.rank() == 0 && comm.wall_s() - begin_s < kRunWarmupS ? 1 : 0;
    broadcast(comm, go, 0);
  }
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// The node function: every rank runs the same sweep; rank 0 prints and keeps the rows.
void bench_node(Communicator& comm, const Plan& plan, const BenchFlags& f, std::vector<Row>& rows) {
  const int world = comm.size();
  const int rank = comm.rank();
  if (plan.root >= world)
    throw UsageError(
        fmt::format("--root {}: use a rank of the world, 0..{}", plan.root, world - 1));
  if (rank == 0) print_header(plan, f, world);
  BenchCase bench(plan.op, plan.reduce_op, plan.root, world, rank);
  const CollectiveOptions options{.algorithm = plan.requested};
  // Enough for the start time to reach every rank: one latency per hop of the broadcast.
  const double lead_s =
      kStartMarginS + (std::bit_width(static_cast<unsigned>(world - 1)) + 1) * plan.link.latency_s;
  prctl(PR_SET_TIMERSLACK, 1000UL);  // wake at the start time within 1 us, not 50
  uint64_t last_bytes = UINT64_MAX;
  std::vector<double> times, bare_times, ratios, loop_times;
  bool warmed_up = false;
  for (uint64_t size : plan.sizes) {
    const uint64_t bytes = bench.resize(size);
    if (bytes == last_bytes) continue;  // rounding to whole rows gave the same size again
    last_bytes = bytes;
    times.clear();
    bare_times.clear();
    ratios.clear();
    loop_times.clear();
    // What each rank's link carries in this collective, on every loopback flow at once.
    const auto loop_bytes =
        static_cast<uint64_t>(std::ceil(bus_factor(plan.op, world) * static_cast<double>(bytes)));
    const bool paired_loop = plan.loopback && bytes >= kBaselineFromBytes && loop_bytes > 0;
    auto time_loop = [&] {
      // Between two barriers: the other ranks wait in the second, idle (not filling or
      // checking buffers), while rank 0's loopback threads have the cores.
      barrier(comm);
      const double seconds =
          rank == 0 ? plan.loopback->round(loop_bytes, std::min(bytes, kLoopBufferMax)) : 0.0;
      barrier(comm);
      return seconds;
    };
    uint64_t wrong = 0;
    auto time_bare = [&] {
      // The same buffer as dsgd's, filled the same way just before: the two differ only in
      // the call, not in the memory (alignment, pages, cache) they work on.
      bench.reset();
      const double start_s = start_together(comm, lead_s);
      plan.bare(bench.data().data(), bench.count());
      return comm.wall_s() - start_s;
    };
    if (!warmed_up) {
      warm_up_run(comm, bench, options, lead_s);
      warmed_up = true;
    }
    for (int it = 0; it < plan.warmup + plan.iters; ++it) {
      // With a baseline the two alternate which goes first, so both meet the same load.
      const bool baseline_first = it % 2 == 1;
      double bare_s = plan.bare && baseline_first ? time_bare() : 0;
      double loop_s = paired_loop && baseline_first ? time_loop() : 0;
      bench.reset();
      const double start_s = start_together(comm, lead_s);
      bench.run(comm, options);
      const double end_s = comm.wall_s();
      wrong += bench.count_wrong();  // before a bare run reuses the buffer
      if (plan.bare && !baseline_first) bare_s = time_bare();
      if (paired_loop && !baseline_first) loop_s = time_loop();
      if (it >= plan.warmup) {
        times.push_back(end_s - start_s);
        if (plan.bare) {
          bare_times.push_back(bare_s);
          // Paired: the two ran back to back, so a slow spell of the machine hits both.
          if (bare_s > 0) ratios.push_back((end_s - start_s) / bare_s);
        }
        loop_times.push_back(loop_s);
      }
    }
    // Each iteration's time on every rank, for rank 0 to pair with its loopback rounds.
    std::vector<float> iteration_us;
    if (paired_loop)
      for (double t : times)
        iteration_us.push_back(static_cast<float>(t * 1e6));
    std::vector<float> all_iterations(rank == 0 ? iteration_us.size() * world : 0);
    if (paired_loop) gather(comm, iteration_us, all_iterations, 0);
    // Gather (median us, wrong count, bare median us, median paired ratio) from every rank;
    // the count is split in two so that each half is exact in a float.
    constexpr int kFields = 5;
    const float mine[kFields] = {
        static_cast<float>(median(times) * 1e6), static_cast<float>(wrong >> 20),
        static_cast<float>(wrong & 0xFFFFF), static_cast<float>(median(bare_times) * 1e6),
        static_cast<float>(median(ratios))};
    std::vector<float> all(rank == 0 ? kFields * world : 0);
    gather(comm, mine, all, 0);
    if (rank != 0) continue;
    Row row{.bytes = bytes,
            .count = bytes / sizeof(float),
            // native: the backend's own may run; predictions are for dsgd's fallback.
            .algorithm = plan.requested == Algorithm::native
                             ? Algorithm::native
                             : resolve_algorithm(plan.op, plan.requested, world, bytes)};
    double bare_us = 0, ratio_sum = 0;
    for (int r = 0; r < world; ++r) {
      const float* f = &all[kFields * r];
      row.time_us = std::max<double>(row.time_us, f[0]);
      row.wrong += (static_cast<uint64_t>(f[1]) << 20) + static_cast<uint64_t>(f[2]);
      bare_us = std::max<double>(bare_us, f[3]);
      ratio_sum += f[4];
    }
    if (plan.bare && bare_us > 0) {
      row.bare_us = bare_us;
      row.overhead_pct = (ratio_sum / world - 1) * 100;
    }
    if (row.time_us > 0) {
      row.algbw_GBps = bytes / row.time_us / 1e3;
      row.busbw_GBps = row.algbw_GBps * bus_factor(plan.op, world);
    }
    if (!ideal(plan.link)) {
      const double predicted = collective_cost(plan.op, row.algorithm, world, bytes)
                                   .predict_s(plan.link.latency_s, plan.link.bandwidth_Bps);
      row.predicted_us = predicted * 1e6;
      if (predicted > 0) row.error_pct = (row.time_us / *row.predicted_us - 1) * 100;
    }
    if (paired_loop) {
      // busbw / loopback rate = (loop bytes / collective time) / (loop bytes / round time).
      std::vector<double> paired;
      for (size_t i = 0; i < times.size(); ++i) {
        double slowest_us = 0;
        for (int r = 0; r < world; ++r)
          slowest_us = std::max<double>(slowest_us, all_iterations[r * times.size() + i]);
        if (slowest_us > 0) paired.push_back(loop_times[i] / (slowest_us * 1e-6));
      }
      const double loop_s = median(loop_times);
      if (loop_s > 0) row.loopback_GBps = loop_bytes / loop_s / 1e9;
      if (!paired.empty()) row.vs_loopback_pct = median(paired) * 100;
    }
    print_row(row);
    rows.push_back(row);
  }
}

}  // namespace

uint64_t parse_size_bytes(const std::string& text, const char* flag) {
  size_t used = 0;
  double value = -1;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  std::string unit = text.substr(used);
  std::transform(unit.begin(), unit.end(), unit.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  double scale = 0;
  for (auto [names, s] : {std::pair{"|b", 1.0}, std::pair{"k|kb|kib", 1024.0},
                          std::pair{"m|mb|mib", 1048576.0}, std::pair{"g|gb|gib", 1073741824.0}}) {
    const std::string list = std::string("|") + names + "|";
    if (list.find("|" + unit + "|") != std::string::npos) scale = s;
  }
  if (used == 0 || scale == 0 || !(value >= 0) || !std::isfinite(value))
    throw UsageError(
        fmt::format("{} {}: give a size in bytes, with K, M or G for KiB, MiB, GiB (e.g. 4K, 64M)",
                    flag, text));
  return static_cast<uint64_t>(value * scale);
}

void add_bench_command(CLI::App& app, BenchFlags& f) {
  CLI::App* bench = app.add_subcommand("bench", "Measure communication on this backend");
  bench->require_subcommand(1);
  CLI::App* c =
      bench->add_subcommand("collective",
                            "Time a collective over a sweep of sizes, check every result, compare "
                            "with the alpha-beta prediction (like nccl-tests)");
  c->add_option("--op", f.op,
                "all_reduce | broadcast | reduce | all_gather | reduce_scatter | gather | "
                "scatter | barrier")
      ->capture_default_str();
  c->add_option("--algorithm", f.algorithm,
                "auto | naive | ring | tree | halving_doubling | native (all_reduce has four; "
                "the other ops one each)")
      ->capture_default_str();
  c->add_option("--min-bytes", f.min_bytes, "Smallest size (K, M, G = KiB, MiB, GiB)")
      ->capture_default_str();
  c->add_option("--max-bytes", f.max_bytes, "Largest size")->capture_default_str();
  c->add_option("--step-factor", f.step_factor, "Each size is this many times the previous")
      ->capture_default_str();
  c->add_option("--iters", f.iters, "Timed iterations per size")->capture_default_str();
  c->add_option("--warmup", f.warmup, "Untimed iterations per size first")->capture_default_str();
  c->add_option("--reduce-op", f.reduce_op, "sum | avg | max | min | prod")->capture_default_str();
  c->add_option("--root", f.root, "Root rank of broadcast, reduce, gather, scatter")
      ->capture_default_str();
  c->add_option("--json", f.json, "Also write the rows as JSON to this file");
  sim::add_run_flags(*c, f.run, sim::kBackendFlag | sim::kClusterFlags, bench_defaults());
  c->add_flag("--explain", f.explain,
              "Print each algorithm's steps and bytes at --max-bytes, and exit");
  c->add_flag("--no-baseline", f.no_baseline,
              "Skip the baselines: the loopback ring (sim), the bare MPI_Allreduce (mpi, native)");
}

sim::RunSpec bench_defaults() {
  sim::RunSpec d;
  d.cluster.timeout = std::chrono::seconds(60);
  return d;
}

int run_bench(const BenchFlags& f) {
  const sim::RunSpec spec = sim::build_run_spec(f.run, bench_defaults());
  const bool sim = spec.backend == sim::Backend::sim;
  const int nodes = sim ? spec.cluster.nodes : std::max(spec.cluster.nodes, 1);
  Plan plan{.op = parse_collective_op(f.op),
            .requested = parse_algorithm(f.algorithm),
            .reduce_op = parse_reduce_op(f.reduce_op),
            .root = f.root,
            .link = spec.cluster.network.link,
            .iters = f.iters,
            .warmup = f.warmup};
  if (f.iters < 1) throw UsageError(fmt::format("--iters {}: use 1 or more", f.iters));
  if (f.warmup < 0) throw UsageError(fmt::format("--warmup {}: use 0 or more", f.warmup));
  if (!(f.step_factor > 1) || !std::isfinite(f.step_factor))
    throw UsageError(fmt::format("--step-factor {}: use a number above 1, e.g. 2", f.step_factor));
  if (f.root < 0 || (sim && f.root >= nodes))
    throw UsageError(fmt::format("--root {}: use a rank of the world, 0..{}", f.root, nodes - 1));
  const uint64_t min_bytes = parse_size_bytes(f.min_bytes, "--min-bytes");
  const uint64_t max_bytes = parse_size_bytes(f.max_bytes, "--max-bytes");
  if (min_bytes > max_bytes)
    throw UsageError(
        fmt::format("--min-bytes {} is above --max-bytes {}", f.min_bytes, f.max_bytes));
  if (max_bytes > kMaxBenchBytes)
    throw UsageError(
        fmt::format("--max-bytes {}: at most 1G (every node holds the buffers)", f.max_bytes));
  // An algorithm the op lacks is refused now, not by every rank later.
  resolve_algorithm(plan.op, plan.requested, nodes, max_bytes);
  sim::check_output_path(f.json, "--json");
  plan.sizes = size_sweep(plan.op, min_bytes, max_bytes, f.step_factor);

  if (f.explain) {
    BenchCase sizing(plan.op, plan.reduce_op, 0, nodes, 0);
    explain(plan, nodes, sizing.resize(max_bytes));
    return kExitOk;
  }
  if (sim && nodes >= 2 && !f.no_baseline && max_bytes >= kBaselineFromBytes)
    plan.loopback = std::make_shared<LoopbackRing>(nodes);
  if (plan.op == CollectiveOp::all_reduce && plan.requested == Algorithm::native &&
      plan.reduce_op == ReduceOp::SUM && !f.no_baseline)
    plan.bare = bare_all_reduce(f.run.backend);

  std::vector<Row> rows;
  int world = nodes;
  const sim::ClusterOptions options{spec.cluster};
  const bool hosts_rank0 = run_on_backend(f.run.backend, options, [&](Communicator& comm) {
    if (comm.rank() == 0) world = comm.size();
    bench_node(comm, plan, f, rows);
  });
  if (!hosts_rank0) return kExitOk;
  uint64_t wrong = 0;
  for (const Row& r : rows)
    wrong += r.wrong;
  fmt::print("# {} wrong element{} in all results\n", wrong, wrong == 1 ? "" : "s");
  if (!f.json.empty()) {
    write_file_atomic(f.json, to_json(plan, f, world, rows).dump(2) + "\n");
    fmt::print("# rows written to {}\n", f.json);
  }
  if (wrong > 0) {
    fmt::print(stderr, "dsgd: error: {} {} results had {} wrong elements\n", to_string(plan.op),
               to_string(plan.requested), wrong);
    return kExitOther;
  }
  return kExitOk;
}

}  // namespace dsgd::cli
