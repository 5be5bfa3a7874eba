// The launcher of a simulated cluster: starts N nodes (threads of this process that
// connect over loopback TCP, through one LoopbackHub, as pairs first talk), runs the same
// node function on each, and rethrows the first failure after stopping the others.
// A watchdog reports a deadlock (every running rank blocked, nothing in flight) instead
// of letting the run hang. Not a scheduler: every node runs until its function returns.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>

#include "core/comm/communicator.h"
#include "sim/control.h"
#include "sim/network.h"
#include "sim/node.h"

namespace dsgd::sim {

inline constexpr int kMaxNodes = 256;
// Ranks of a SimGrid run (sim/simgrid): actors in virtual time, no sockets.
inline constexpr int kMaxSimgridRanks = 65536;

// The cluster a run describes (values: part of the run description, run_spec.h), and what
// a launch wires to it (observers, the GUI's controls: null in a description).
struct ClusterOptions {
  int nodes = 4;
  NetworkConfig network;                      // links, topology, jitter, loss, outages
  NodeOptions node;                           // every node ...
  std::map<int, NodeOptions> node_overrides;  // ... except these (stragglers, crashes)
  std::chrono::milliseconds timeout{30000};   // deadline of every blocking call
  EventSink* events = nullptr;                // shared by all nodes; must be thread-safe
  SimControl* control = nullptr;              // pause, speed, step mode (optional)
  bool detect_deadlock = true;
  // How many rank pairs the node function talks over (training_pairs, collective_pairs), for
  // the check that the run fits the process's descriptor limit before it starts; -1 when
  // not known (only the nodes' own descriptors are counted then).
  int64_t pairs = -1;
  // The run's time 0 (events' wall_s); none: when run_cluster starts. An elastic run's later
  // rounds keep the first round's, so their events follow on (elastic.h).
  std::optional<Clock::time_point> epoch;
  // Called on a node's thread when its crash fault fires (its connections are down).
  std::function<void(int rank)> on_crash;

  // The options of `rank`: its override, else the default node's.
  const NodeOptions& node_of(int rank) const;
};

using NodeFunction = std::function<void(Communicator&)>;

// Runs `fn` on every node and returns when all are done. If a node throws, the others
// are aborted (their pending calls fail with a CommError naming that node) and the
// first exception is rethrown here; a crash fault instead drops the node's connections,
// so the others find out as they would over a network. DeadlockError when every running
// node is blocked for good. UsageError for a node count outside 1..kMaxNodes, and, before
// any node starts, for a run that needs more file descriptors than the process may open
// (fd_limit.h).
void run_cluster(const ClusterOptions& options, const NodeFunction& fn);

}  // namespace dsgd::sim
