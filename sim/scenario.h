// Scenarios: a TOML file that describes a simulated cluster — node count, topology, link
// latency / bandwidth / jitter / loss with per-link and per-node overrides, compute speed,
// and faults (stragglers, crashes, links that go down, partitions). Examples ship in
// assets/scenarios/. CLI flags override what a scenario says. Parsed with toml++; errors
// name the file, line and column. Not a general config system: train flags live in the CLI.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "sim/cluster.h"

namespace dsgd::sim {

struct Scenario {
  std::optional<int> nodes;
  NetworkConfig network;
  NodeOptions node;                   // defaults for every node
  std::map<int, NodeOptions> faults;  // per-rank straggler and crash settings
};

// `given` is a TOML file's path or a shipped scenario's name (sim/scenario_names.h).
// DataError "FILE:LINE:COL: what; what to do" for malformed TOML, unknown keys (typos),
// wrong types and bad values.
Scenario load_scenario(const std::string& given);
Scenario parse_scenario(std::string_view text, const std::string& source_name);

// Fault flags as the CLI writes them: "--straggler 2:3" (rank 2 three times slower),
// "--crash 1@20" (rank 1 dies when step 20 begins) or "--crash 1@1.5s" (at 1.5 s).
void add_straggler(ClusterOptions& cluster, const std::string& text);
void add_crash(ClusterOptions& cluster, const std::string& text);

// Fills the cluster (network, node, overrides, nodes if set) from the scenario.
void apply(const Scenario& scenario, ClusterOptions& cluster);

}  // namespace dsgd::sim
