// One simulated node as its own process (`dsgd node`): the rendezvous with rank 0, which
// hosts it; the run's epoch and network clock; the node, which learns every rank's address
// and connects to a peer when it first sends to it; then the node function. The many-process twin
// of run_cluster (cluster.h): both make, link and run their nodes alike (node_setup.h). Clocks:
// ranks on one machine share CLOCK_MONOTONIC, so with rank 0's epoch their network clocks agree and
// frames carry absolute arrival times, as between threads. Machines' clocks differ: when a rank
// runs elsewhere (its boot id differs from rank 0's), every node stamps frames with the link delay
// instead and the receiver counts it from the bytes' arrival. Not a process launcher: one process
// per rank is started by the user (shell, ssh, script).
#pragma once

#include <utility>  // before Asio on g++ 12 (Boost 1.74)

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <functional>
#include <string>

#include "sim/cluster.h"
#include "sim/elastic.h"
#include "sim/handshake.h"

namespace dsgd::sim {

// Whether the nodes' network clocks are one (--clock): automatic when every rank runs on
// rank 0's machine; local counts link delays from each message's arrival, as across
// machines, wherever the ranks run.
enum class ClockChoice { automatic, shared, local };

struct NodeProcessOptions {
  int rank = 0;  // of ClusterOptions::nodes; kJoinRank: joins an elastic run under way
  boost::asio::ip::tcp::endpoint rendezvous;  // where rank 0 hosts the rendezvous
  boost::asio::ip::address listen;            // where this node (and rank 0's rendezvous) accepts
  std::string token;                          // every node of the run must present it
  uint64_t run_hash = 0;  // what the run computes: every node's must be the same
  ClockChoice clock = ClockChoice::automatic;
  // Called once this node accepts peers on `port`, before the rendezvous waits for the rest.
  std::function<void(uint16_t port)> on_listening;
  // A node that joins an elastic run (rank kJoinRank, rendezvous.h): called once rank 0 has
  // numbered it (`node`, the nodes' numbering) and given it `rank` in a round of `world`.
  std::function<void(int node, int rank, int world)> on_joined;
  // Rank 0: where the rendezvous reports a connection it refused (empty: stderr).
  RefusalSink on_refusal;
};

// Runs `fn` on this process's node of a run of `cluster.nodes` nodes, and returns once it
// is done, its sends written and its connections closed. `cluster` gives the network, the
// node's options, the deadline of every wait (the rendezvous's too), the event sink and a
// control (optional: step mode, pause, speed), whose clock the node then counts on, link
// delays from each message's arrival as across machines.
// CommError "rank R crashed (a --crash fault)" when a crash fault fires (the others see the
// connections drop); UsageError for ClockChoice::shared on several machines; the
// rendezvous's TimeoutError and CommError (rendezvous.h); what `fn` throws.
void run_node_process(const NodeProcessOptions& process, const ClusterOptions& cluster,
                      const NodeFunction& fn);

// An elastic run across processes (elastic.h's policies), this process's node in each
// round: rank 0's process hosts the rendezvous of every round, as the first node hosts
// torchrun's c10d rendezvous, so the run goes on only while it lives. After each round every
// rank reports how it ended over its rendezvous connection; a rank whose connection closed
// (its process ended: a crash fault, a kill) is lost, and rank 0 decides as run_elastic
// does: the end, an error for every rank, or the next round with the survivors renumbered.
// In the next round only rank 0 holds the state to go on from (ElasticRound::resume: its own
// commit, or newest_checkpoint()), and ElasticRound::shares_state tells every rank's `fn` to
// share it first. Returns the membership changes (on rank 0; the others' list is empty).
// CommError "rank R crashed (a --crash fault)" when this node's crash fault fires; the error
// that ends the run on every rank otherwise.
std::vector<MembershipChange> run_elastic_node_process(const NodeProcessOptions& process,
                                                       const ClusterOptions& cluster,
                                                       const ElasticSpec& spec,
                                                       const RoundFunction& fn,
                                                       const CheckpointSource& newest_checkpoint);

}  // namespace dsgd::sim
