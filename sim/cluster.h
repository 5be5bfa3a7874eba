// The launcher of a simulated cluster: starts N nodes (threads of this process, each
// with its own TCP endpoint on 127.0.0.1), wires them into a full mesh, runs the same
// node function on each, and rethrows the first failure after stopping the others.
// Not a scheduler: every node runs until its function returns or the run is aborted.
#pragma once

#include <chrono>
#include <functional>

#include "core/comm/communicator.h"
#include "sim/node.h"

namespace dsgd::sim {

inline constexpr int kMaxNodes = 256;

struct ClusterOptions {
  int nodes = 4;
  NodeOptions node;
  std::chrono::milliseconds timeout{30000};  // deadline of every blocking call
  EventSink* events = nullptr;               // shared by all nodes; must be thread-safe
};

using NodeFunction = std::function<void(Communicator&)>;

// Runs `fn` on every node and returns when all are done. If a node throws, the others
// are aborted (their pending calls fail with a CommError naming that node) and the
// first exception is rethrown here. UsageError for a node count outside 1..kMaxNodes.
void run_cluster(const ClusterOptions& options, const NodeFunction& fn);

}  // namespace dsgd::sim
