// How a run's simulated nodes are made, linked and run, the same whether they are threads
// of one process (run_cluster, cluster.h) or one process each (run_node_process,
// node_process.h): each node with its own options, the run's deadline, events, job and
// epoch; a full mesh in which the higher rank connects to the lower; the node function
// followed by a flush, or a crash fault's dropped connections.
// Not a launcher: the two launchers call these.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "sim/cluster.h"
#include "sim/handshake.h"
#include "sim/rendezvous.h"

namespace dsgd::sim {

// What every node of a run presents and counts from.
struct NodeJob {
  JobIdentity job;          // the token (and epoch) every connection's hello carries
  Clock::time_point epoch;  // the run's time 0 (wall_s) on this machine's steady clock
};

// Rank `rank` of the cluster: its options (ClusterOptions::node_of), accepting peers on
// `listen_address` (empty: the options' own), with the cluster's deadline and event sink.
std::unique_ptr<SimNode> make_node(const ClusterOptions& options, int rank, Network& network,
                                   NetClock& clock, const NodeJob& job,
                                   const std::string& listen_address = "");

// The full mesh of nodes that live in this process: rank j connects to each lower rank i,
// which accepts at once, so each accepted socket is the one just connected and set-up
// needs no extra thread.
void connect_mesh(const std::vector<std::unique_ptr<SimNode>>& nodes);
// One node's links in a mesh of processes, paired as connect_mesh pairs them: it connects
// to every lower rank at peers[p], then accepts every higher one.
void join_mesh(SimNode& node, const std::vector<PeerAddress>& peers);

// Runs `fn` on the node (its rank thread) and writes out what it sent, within `timeout`.
// Returns false when a crash fault fired: the node's connections are dropped, so the others
// find out as over a network. Anything else `fn` throws propagates.
bool run_node_function(SimNode& node, const NodeFunction& fn, std::chrono::milliseconds timeout);

}  // namespace dsgd::sim
