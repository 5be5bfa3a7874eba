// The rendezvous of `dsgd node` processes. Rank 0 listens on the rendezvous address; each
// other rank registers in two steps (a hello, answered by rank 0's hello with the run's
// network-clock epoch; then a hello with its listening port) and, once every rank is in,
// receives the table of all ranks' addresses. Foreign connections are refused, logged and
// forgotten; every wait has a deadline. Not the data path: nodes then connect directly.
// An elastic run (elastic.h) keeps each rank's connection open after the table: at the end of
// every round, each rank reports how its round ended, and rank 0 answers with the run's end,
// an error, or the next round (the rank's new number); a connection that closed is a rank
// whose process ended. Rank 0 then listens again: a node that asks to join (kJoinRank) is
// welcomed and waits for the next round, which rank 0 starts for it as a step begins.
#pragma once

#include <utility>  // before Asio on g++ 12 (Boost 1.74)

#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/comm/communicator.h"
#include "sim/handshake.h"

namespace dsgd::sim {

struct PeerAddress {
  std::string host;  // an IP address
  uint16_t port = 0;
};

struct RendezvousTable {
  int64_t epoch_ns = 0;  // network time 0, steady-clock ns of rank 0's machine
  bool one_host = true;  // every rank runs on rank 0's machine: the steady clock is shared
  std::vector<PeerAddress> peers;  // by rank
};

// How one rank's round of an elastic run ended, as it reports it to rank 0.
struct RoundReport {
  bool finished = false;     // trained to the end; otherwise `failure` says what stopped it
  int64_t reached_step = 0;  // the steps it had finished
  double model_s = 0;        // its model time then
  std::string failure;       // the error it saw (ranks numbered as in the round)
  int failure_peer = -1;     // the rank that error names
};

// The next round of an elastic run, as rank 0 announces it to each survivor.
struct RoundStart {
  int round = 0;
  int rank = 0;               // the receiver's rank in it
  std::vector<int> nodes;     // the node (first round's rank) of each of its ranks
  double model_start_s = 0;   // the model time it starts at
  bool shares_state = false;  // rank 0 shares the state to go on from (none: start afresh)
  int world() const { return static_cast<int>(nodes.size()); }
};

// The rank in the hello of a node that asks to join an elastic run under way (dsgd node
// --join): rank 0 gives it its rank in the next round.
inline constexpr int kJoinRank = -1;

// Largest table or abort message a rank accepts (256 ranks of 67 bytes fit).
inline constexpr size_t kMaxRendezvousReplyBytes = 32 * 1024;

// "HOST:PORT" with an IPv4 address or "localhost" (no name lookups: they have no deadline).
// UsageError naming `flag` otherwise.
boost::asio::ip::tcp::endpoint parse_endpoint(const std::string& text, const char* flag);

class RendezvousServer {
 public:
  // Listens on `bind` at once (UsageError if it cannot) and picks the run's epoch (now).
  // Ranks are let in with `token` and `run_hash` (handshake.h, JobIdentity); a connection
  // refused goes to `refusals` (handshake.h; empty: stderr).
  RendezvousServer(const boost::asio::ip::tcp::endpoint& bind, int world, std::string token,
                   uint64_t run_hash, RefusalSink refusals = {});
  ~RendezvousServer();
  int64_t epoch_ns() const;
  uint16_t port() const;
  // Registers ranks 1..world-1, then sends each the table (rank 0 at `self`) and returns it.
  // At the deadline, tells the registered ranks which are missing and throws TimeoutError
  // naming the first missing rank.
  // `since`: when the wait for the ranks began (the deadline's start), which the message
  // about a missing rank counts from, so it says the timeout the user gave.
  RendezvousTable serve(const PeerAddress& self, Clock::time_point deadline,
                        Clock::time_point since);

  // Elastic runs, after serve(): each other rank's report of the round just run, by rank
  // (index 0 is this process's and stays empty); nullopt for a rank whose connection closed
  // (its process ended), that sent something else, or that said nothing by the deadline.
  std::vector<std::optional<RoundReport>> collect_reports(Clock::time_point deadline);
  // Tells every rank still connected, and every node waiting to join, that the run is
  // over: done when `reason` is empty,
  // otherwise an error naming `peer` (the ranks throw CommError with `reason`).
  void end_rounds(const std::string& reason, int peer, Clock::time_point deadline);
  // Elastic runs, after serve(): listens again, for nodes that ask to join (kJoinRank).
  void admit_joiners();
  // Handles what has arrived (never waits) and returns how many nodes wait to join.
  size_t poll_joiners();
  // Starts the next round with `survivors` (this round's ranks, 0 first, in order) as its
  // ranks 0..N'-1, then the first start.world() - N' nodes waiting to join: tells each its
  // new rank, takes its new listening port, and sends the table (rank 0 at `self`), which it
  // returns. A node that does not answer by the deadline ends the run: the others are told,
  // and the error names it.
  RendezvousTable next_round(const std::vector<int>& survivors, RoundStart start,
                             const PeerAddress& self, Clock::time_point deadline);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class RendezvousClient {
 public:
  RendezvousClient(const boost::asio::ip::tcp::endpoint& server, int rank, int world,
                   std::string token, uint64_t run_hash);
  ~RendezvousClient();
  // Connects (retrying while rank 0 is not listening yet) and registers; returns rank 0's
  // hello (the run's epoch, rank 0's host). CommError when rank 0 refuses this node,
  // TimeoutError at the deadline.
  Hello join(Clock::time_point deadline);
  // Sends this rank's listening port and waits for the table. CommError naming the missing
  // rank when rank 0 gave up waiting for one, TimeoutError at the deadline.
  RendezvousTable finish(uint16_t port, Clock::time_point deadline);
  // Elastic runs, after finish(): reports how this rank's round ended and waits for rank
  // 0's answer: nullopt when the run is over; the next round otherwise (this rank now has
  // its number in it: call finish() with the new node's port for the table). CommError with
  // rank 0's reason when it ends the run with an error, and naming rank 0 when its process
  // is gone; TimeoutError at the deadline.
  std::optional<RoundStart> report(const RoundReport& report, Clock::time_point deadline);
  // A node that asked to join (rank kJoinRank), after join(): waits for the round it joins
  // (then call finish() with the new node's port). CommError when the run ends first.
  RoundStart await_round(Clock::time_point deadline);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dsgd::sim
