#include "cli/sim_flags.h"

#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "core/errors.h"
#include "sim/link_model.h"
#include "sim/scenario.h"

namespace dsgd::cli {

void add_sim_flags(CLI::App& t, SimFlags& f) {
  t.add_option("--nodes", f.nodes, "Number of simulated nodes, 1-256 (default 4)");
  t.add_option("--scenario", f.scenario, "Cluster scenario (TOML, see assets/scenarios/)");
  t.add_option("--topology", f.topology, "mesh | switch | racks");
  t.add_option("--latency", f.latency, "One-way link latency, e.g. 2ms (default 0)");
  t.add_option("--bandwidth", f.bandwidth,
               "Link bandwidth, e.g. 1Gbit or 100MB/s (default unlimited)");
  t.add_option("--jitter", f.jitter, "Extra one-way delay, uniform in [0, J], e.g. 200us");
  t.add_option("--loss", f.loss, "Probability a message is lost and resent after 200 ms");
  t.add_option("--straggler", f.stragglers, "RANK:FACTOR, e.g. 2:3 (repeatable)");
  t.add_option("--crash", f.crashes, "RANK@STEP or RANK@TIME, e.g. 1@20 or 1@1.5s (repeatable)");
  t.add_option("--timeout", f.timeout, "Deadline of every blocking call")->capture_default_str();
}

CLI::Validator integer_at_least(int64_t min, const std::string& hint) {
  return CLI::Validator(
      [min, hint](std::string& text) -> std::string {
        const char* end = text.data() + text.size();
        bool ok = false;
        if (min >= 0) {  // unsigned, so that every uint64 seed fits; from_chars refuses '-'
          uint64_t v = 0;
          const auto [ptr, ec] = std::from_chars(text.data(), end, v);
          ok = ec == std::errc() && ptr == end && v >= static_cast<uint64_t>(min);
        } else {
          int64_t v = 0;
          const auto [ptr, ec] = std::from_chars(text.data(), end, v);
          ok = ec == std::errc() && ptr == end && v >= min;
        }
        if (ok) return {};
        return fmt::format("'{}' is not allowed; use a whole number of {} or more ({})", text, min,
                           hint);
      },
      fmt::format("INT>={}", min));
}

sim::ClusterOptions build_cluster_options(const SimFlags& f) {
  sim::Scenario s;
  if (!f.scenario.empty()) s = sim::load_scenario(f.scenario);
  for (const auto& text : f.stragglers)
    sim::add_straggler(s, text);
  for (const auto& text : f.crashes)
    sim::add_crash(s, text);
  if (!f.topology.empty()) {
    try {
      s.network.topology = sim::parse_topology(f.topology);
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("--topology: {}", e.what()));
    }
  }
  if (!f.latency.empty()) s.network.link.latency_s = sim::parse_duration_s(f.latency, "--latency");
  if (!f.bandwidth.empty())
    s.network.link.bandwidth_Bps = sim::parse_bandwidth_Bps(f.bandwidth, "--bandwidth");
  if (!f.jitter.empty()) s.network.link.jitter_s = sim::parse_duration_s(f.jitter, "--jitter");
  if (!f.loss.empty()) {
    double loss = -1;
    auto [ptr, ec] = std::from_chars(f.loss.data(), f.loss.data() + f.loss.size(), loss);
    if (ec != std::errc() || ptr != f.loss.data() + f.loss.size() || !(loss >= 0 && loss <= 0.5))
      throw UsageError(
          fmt::format("--loss '{}': give a probability from 0 to 0.5, e.g. 0.01", f.loss));
    s.network.link.loss = loss;
  }
  sim::ClusterOptions options;
  sim::apply(s, options);
  if (f.nodes != -1 || !s.nodes) options.nodes = f.nodes != -1 ? f.nodes : 4;
  if (options.nodes < 1 || options.nodes > sim::kMaxNodes)
    throw UsageError(
        fmt::format("--nodes {}: use 1 to {} simulated nodes", options.nodes, sim::kMaxNodes));
  for (const auto& [rank, _] : options.node_overrides)
    if (rank >= options.nodes)
      throw UsageError(fmt::format("a fault names rank {}, but there are only {} nodes (0..{})",
                                   rank, options.nodes, options.nodes - 1));
  for (const auto& o : options.network.outages)
    for (auto [a, b] : o.links)
      if (a >= options.nodes || b >= options.nodes)
        throw UsageError(fmt::format("an outage names rank {}, but there are only {} nodes",
                                     std::max(a, b), options.nodes));
  const double timeout_s =
      f.timeout.starts_with('-') ? -1 : sim::parse_duration_s(f.timeout, "--timeout");
  if (timeout_s <= 0)
    throw UsageError(
        fmt::format("--timeout '{}': the deadline must be positive, e.g. 30s", f.timeout));
  options.timeout = std::chrono::milliseconds(static_cast<int64_t>(std::ceil(timeout_s * 1000)));
  return options;
}

std::string describe_network(const sim::ClusterOptions& o) {
  const sim::LinkSpec& l = o.network.link;
  std::string s =
      fmt::format("latency {}, bandwidth {}, {}", sim::format_duration(l.latency_s),
                  sim::format_bandwidth(l.bandwidth_Bps), sim::to_string(o.network.topology));
  if (l.jitter_s > 0) s += ", jitter " + sim::format_duration(l.jitter_s);
  if (l.loss > 0) s += fmt::format(", loss {:g}", l.loss);
  if (!o.network.overrides.empty())
    s += fmt::format(", {} link overrides", o.network.overrides.size());
  if (!o.node_overrides.empty()) s += fmt::format(", {} faulty nodes", o.node_overrides.size());
  if (!o.network.outages.empty()) s += fmt::format(", {} outages", o.network.outages.size());
  return s;
}

}  // namespace dsgd::cli
