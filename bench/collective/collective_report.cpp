// The text and JSON of a collective sweep. Column units: sizes in bytes and floats, times
// in us, bandwidths in GB/s (1e9 bytes per second), errors and ratios in %.
#include "bench/collective/collective_report.h"

#include <optional>

#include <fmt/format.h>

#include "bench/collective/bench_case.h"
#include "core/comm/cost_model.h"
#include "sim/link_model.h"
#include "sim/network.h"

namespace dsgd::bench {
namespace {

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

// How a SimGrid run's figures were taken.
std::string virtual_time_lines(const CollectivePlan& plan) {
  std::string s = fmt::format(
      "# link: {} (SimGrid's {} links); {} warm-up + {} timed iteration{} per size, {}\n",
      link_text(plan.link), plan.lv08 ? "LV08" : "CM02", plan.warmup, plan.iters,
      plan.iters == 1 ? "" : "s",
      plan.phantom ? "phantom payloads: sizes only, reductions skipped, results not checked"
                   : "every result checked");
  s += "# time: virtual (SimGrid's clock), from a start common to all ranks, median over "
       "iterations on each rank, maximum over ranks; every iteration takes the same virtual "
       "time\n# wall: the wall-clock seconds one iteration took to simulate, all ranks\n";
  return s;
}

// The comment lines that say how the figures were taken.
std::string method_lines(const CollectivePlan& plan, int world) {
  std::string s = fmt::format(
      "# dsgd bench collective: {}{}, algorithm {}, {} {} ranks, root {}\n", to_string(plan.op),
      plan.op == CollectiveOp::all_reduce || plan.op == CollectiveOp::reduce ||
              plan.op == CollectiveOp::reduce_scatter
          ? fmt::format(" ({})", to_string(plan.reduce_op))
          : "",
      to_string(plan.requested), world, plan.backend, plan.root);
  if (plan.virtual_time) return s + virtual_time_lines(plan);
  s += fmt::format(
      "# link: {}; {} warm-up + {} timed iterations per size (and the first size's warm-up lasts "
      "{} s at least), every result checked\n",
      link_text(plan.link), plan.warmup, plan.iters, kRunWarmupS);
  s += "# time: from a start common to all ranks (each yields until it), median over iterations "
       "on each rank, maximum over ranks\n";
  if (plan.bare)
    s += "# bare: MPI_Allreduce called directly in the same run on the same buffer, refilled "
         "first, iterations alternating with dsgd's (bare: median, maximum over ranks);\n"
         "# overhead: each rank's median of the paired ratio dsgd / bare - 1 over the "
         "iterations, averaged over ranks\n";
  if (plan.loopback)
    s += fmt::format(
        "# loop: from 1 MiB, beside each iteration (before it or after, in turn), {} TCP flows on "
        "127.0.0.1 in a ring each carry what one rank sends (busbw x time), from and into "
        "buffers of the collective's size (at most 64 MiB), all at once, until the last is "
        "done;\n# loop is their median GB/s per flow, busbw/loop the median of the "
        "paired ratios\n",
        plan.loopback->flows());
  return s;
}

}  // namespace

std::string report_header(const CollectivePlan& plan, int world) {
  std::string s = method_lines(plan, world);
  s += fmt::format(
      "#\n# {:>10} {:>10} {:>16} {:>11} {:>7} {:>7} {:>11} {:>7} {:>7} {:>9} {:>7}{}{}\n", "size",
      "count", "algorithm", "time", "algbw", "busbw", "predicted", "error", "loop", "busbw/",
      "wrong", plan.bare ? fmt::format(" {:>11} {:>9}", "bare", "overhead") : "",
      plan.virtual_time ? fmt::format(" {:>9}", "wall") : "");
  s += fmt::format("# {:>10} {:>10} {:>16} {:>11} {:>7} {:>7} {:>11} {:>7} {:>7} {:>9} {:>7}{}{}\n",
                   "(B)", "(floats)", "", "(us)", "(GB/s)", "(GB/s)", "(us)", "(%)", "(GB/s)",
                   "loop (%)", "", plan.bare ? fmt::format(" {:>11} {:>9}", "(us)", "(%)") : "",
                   plan.virtual_time ? fmt::format(" {:>9}", "(s)") : "");
  return s;
}

std::string report_row(const CollectiveRow& r) {
  auto opt = [](const std::optional<double>& v, const char* format) {
    return v ? fmt::format(fmt::runtime(format), *v) : std::string("-");
  };
  return fmt::format(
      "  {:>10} {:>10} {:>16} {:>11.1f} {:>7.3f} {:>7.3f} {:>11} {:>7} {:>7} {:>9} {:>7}{}{}\n",
      r.bytes, r.count, to_string(r.algorithm), r.time_us, r.algbw_GBps, r.busbw_GBps,
      opt(r.predicted_us, "{:.1f}"), opt(r.error_pct, "{:+.1f}"), opt(r.loopback_GBps, "{:.3f}"),
      opt(r.vs_loopback_pct, "{:.0f}"), r.checked ? std::to_string(r.wrong) : "-",
      r.bare_us ? fmt::format(" {:>11.1f} {:>+9.1f}", *r.bare_us, r.overhead_pct.value_or(0)) : "",
      r.wall_s ? fmt::format(" {:>9.3f}", *r.wall_s) : "");
}

std::string explain(const CollectivePlan& plan, int world, uint64_t requested_bytes) {
  const uint64_t bytes = BenchCase(plan.op, plan.reduce_op, 0, world, 0).resize(requested_bytes);
  const bool nominal = ideal(plan.link);
  const double alpha = nominal ? kAutoAlphaS : plan.link.latency_s;
  const double bandwidth = nominal ? kAutoBandwidthBps : plan.link.bandwidth_Bps;
  std::string s = fmt::format("# {} on {} ranks, {} ({} B)\n", to_string(plan.op), world,
                              human_bytes(bytes), bytes);
  s += fmt::format("# predictions for {}{}\n",
                   link_text({.latency_s = alpha, .bandwidth_Bps = bandwidth}),
                   nominal ? " (the nominal link auto assumes; set --latency/--bandwidth)" : "");
  s += "# link model: each directed link has its own latency a and bandwidth B; messages\n"
       "# on different links overlap, so time = steps * a + critical path bytes / B\n";
  s += fmt::format("# {:<18} {:>5} {:>14} {:>14} {:>12}  {}\n", "algorithm", "steps",
                   "busiest sends", "critical path", "predicted", "formula (S = bytes, R = ranks)");
  std::vector<Algorithm> algorithms;
  if (plan.op == CollectiveOp::all_reduce)
    algorithms.assign(std::begin(kAllReduceAlgorithms), std::end(kAllReduceAlgorithms));
  else
    algorithms = {resolve_algorithm(plan.op, Algorithm::automatic, world, bytes)};
  for (Algorithm a : algorithms) {
    const Cost c = collective_cost(plan.op, a, world, bytes);
    s += fmt::format(
        "  {:<18} {:>5} {:>14} {:>14} {:>9.1f} us  {}\n",
        plan.op == CollectiveOp::all_reduce ? to_string(a) : algorithm_label(plan.op, a), c.steps,
        human_bytes(c.bytes_sent_per_rank), human_bytes(c.critical_path_bytes),
        c.predict_s(alpha, bandwidth) * 1e6, cost_formula(plan.op, a));
  }
  if (plan.op == CollectiveOp::all_reduce)
    s += fmt::format("# auto picks {} for this world and size\n",
                     to_string(resolve_algorithm(plan.op, Algorithm::automatic, world, bytes)));
  return s;
}

nlohmann::ordered_json report_json(const CollectivePlan& plan, int world,
                                   const std::vector<CollectiveRow>& rows) {
  auto opt = [](const std::optional<double>& v) {
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
  };
  nlohmann::ordered_json j;
  j["op"] = to_string(plan.op);
  j["reduce_op"] = to_string(plan.reduce_op);
  j["algorithm"] = to_string(plan.requested);
  j["backend"] = plan.backend;
  j["virtual_time"] = plan.virtual_time;
  j["payload"] = plan.phantom ? "phantom" : "real";
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
  for (const CollectiveRow& r : rows) {
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
                         {"wall_s", opt(r.wall_s)},
                         {"wrong", r.checked ? nlohmann::ordered_json(r.wrong) : nullptr}});
  }
  j["wrong"] = plan.phantom ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(wrong);
  return j;
}

}  // namespace dsgd::bench
