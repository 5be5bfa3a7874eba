// How a run's simulated nodes are made and run, the same whether they are threads of one
// process (run_cluster, cluster.h) or one process each (run_node_process, node_process.h):
// each node with its own options, the run's deadline, events, job and epoch; the node
// function followed by a flush, or a crash fault's dropped connections. The nodes connect
// as pairs first talk (connector.h), so nothing links them before they run.
// Not a launcher: the two launchers call these.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "sim/cluster.h"
#include "sim/handshake.h"
#include "sim/loopback_hub.h"

namespace dsgd::sim {

// What every node of a run presents and counts from.
struct NodeJob {
  JobIdentity job;          // the token (and epoch) every connection's hello carries
  Clock::time_point epoch;  // the run's time 0 (wall_s) on this machine's steady clock
};

// Rank `rank` of the cluster: its options (ClusterOptions::node_of), with the cluster's
// deadline and event sink. With a hub it connects to the other nodes of this process
// through it; without, it accepts peers on a port of its own, on `listen_address` (empty:
// the options' own).
std::unique_ptr<SimNode> make_node(const ClusterOptions& options, int rank, Network& network,
                                   NetClock& clock, const NodeJob& job, LoopbackHub* hub,
                                   const std::string& listen_address = "");

// Runs `fn` on the node (its rank thread) and writes out what it sent, within `timeout`.
// Returns false when a crash fault fired: the node's connections are dropped, so the others
// find out as over a network. Anything else `fn` throws propagates.
bool run_node_function(SimNode& node, const NodeFunction& fn, std::chrono::milliseconds timeout);

}  // namespace dsgd::sim
