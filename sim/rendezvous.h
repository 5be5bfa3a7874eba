// The rendezvous of `dsgd node` processes. Rank 0 listens on the rendezvous address; each
// other rank registers in two steps (a hello, answered by rank 0's hello with the run's
// network-clock epoch; then a hello with its listening port) and, once every rank is in,
// receives the table of all ranks' addresses. Foreign connections are refused, logged and
// forgotten; every wait has a deadline. Not the data path: nodes then connect directly.
#pragma once

#include <utility>  // before Asio on g++ 12 (Boost 1.74)

#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <memory>
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

// Largest table or abort message a rank accepts (256 ranks of 67 bytes fit).
inline constexpr size_t kMaxRendezvousReplyBytes = 32 * 1024;

// "HOST:PORT" with an IPv4 address or "localhost" (no name lookups: they have no deadline).
// UsageError naming `flag` otherwise.
boost::asio::ip::tcp::endpoint parse_endpoint(const std::string& text, const char* flag);

class RendezvousServer {
 public:
  // Listens on `bind` at once (UsageError if it cannot) and picks the run's epoch (now).
  // Ranks are let in with `token` and `run_hash` (handshake.h, JobIdentity).
  RendezvousServer(const boost::asio::ip::tcp::endpoint& bind, int world, std::string token,
                   uint64_t run_hash);
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

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dsgd::sim
