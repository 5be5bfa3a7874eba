// The simulated cluster's flags, shared by every command that runs simulated nodes
// (train, bench collective, lesson): --nodes, --scenario and the link and fault flags
// that override it. Builds sim::ClusterOptions; values are checked with one-line errors.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/cluster.h"

namespace CLI {
class App;
class Validator;
}  // namespace CLI

namespace dsgd::cli {

struct SimFlags {
  int nodes = -1;  // -1: not given (the scenario's, else 4)
  std::string scenario;
  std::string topology, latency, bandwidth, jitter, loss;  // empty: not given
  std::vector<std::string> stragglers, crashes;
  std::string timeout = "30s";
};

void add_sim_flags(CLI::App& app, SimFlags& flags);
// A check for an integer flag: a whole number >= min, so that an explicit 0 or a negative
// value is refused ("--steps: 0 is not allowed; use 1 or more ...") instead of being read
// as "not given". `hint` ends the message (what the flag means, its default).
CLI::Validator integer_at_least(int64_t min, const std::string& hint);
// Scenario first, then the flags that were given. UsageError / DataError on bad values.
sim::ClusterOptions build_cluster_options(const SimFlags& flags);
// "latency 2 ms, bandwidth 1 Gbit/s, mesh" — for summaries.
std::string describe_network(const sim::ClusterOptions& options);

}  // namespace dsgd::cli
