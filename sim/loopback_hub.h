// LoopbackHub: how the simulated nodes of one process connect to each other. One listening
// socket on 127.0.0.1 serves them all (a listener per node would cost a descriptor each).
// The node that first sends to a peer connects to it and accepts the other end itself,
// under the hub's lock, then hands the peer its end (a queue and a wake-up); a peer that
// sends first finds the pair made already and takes its end from the queue, so every pair
// has exactly one connection, made when it first talks. The bytes still cross real
// loopback TCP sockets.
// Foreign connections to the port are closed unread when the hub next accepts: only a
// connection whose address is the one the hub just connected from is let in, which the
// kernel vouches for (no token needed).
// Not a node and not a thread: the dialling node's thread does the work.
#pragma once

#include <netinet/in.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sim/connector.h"

namespace dsgd::sim {

class Mailbox;

class LoopbackHub {
 public:
  // Listens on 127.0.0.1 (a port of the kernel's choice) for a run of `world` nodes.
  explicit LoopbackHub(int world);
  ~LoopbackHub();  // closes the port and every end no node took
  LoopbackHub(const LoopbackHub&) = delete;
  LoopbackHub& operator=(const LoopbackHub&) = delete;

  uint16_t port() const { return port_; }
  // The connector of node `rank`, whose mailbox is woken when a connection for it is
  // queued and told when a peer it never connected to crashes; refusals of foreign
  // connections met while it dials go to `refusals`. Both outlive the hub's use of them.
  std::unique_ptr<Connector> join(int rank, Mailbox& mailbox, RefusalLog& refusals);

 private:
  friend class HubConnector;
  struct Member {
    Mailbox* mailbox = nullptr;
    RefusalLog* refusals = nullptr;
    std::vector<Incoming> queued;  // ends made for this node, not yet taken
    std::string crashed;           // why it crashed; empty while it has not
  };

  Dialed dial(int self, int peer);
  void take_incoming(int self, std::vector<Incoming>& out);
  void crashed(int self, const std::string& reason);
  // Under mutex_: a new connection, both ends (self's first). UsageError out of descriptors.
  std::pair<int, int> connect_pair(int self, int peer);
  // Under mutex_: accepting (self: the node dialling, for messages and refusals).
  int accept_from(const sockaddr_in& from, int self);
  int accept_one(sockaddr_in* remote, int self);
  void refuse_waiting(int self);
  void refuse(int fd, const sockaddr_in& remote, int self);
  uint8_t& paired(int a, int b) { return paired_[a * world_ + b]; }

  const int world_;
  int listen_fd_ = -1;
  sockaddr_in address_{};
  uint16_t port_ = 0;
  std::mutex mutex_;
  std::vector<Member> members_;
  std::vector<uint8_t> paired_;  // world x world, symmetric: 1 once a connection exists
  // Per node: something is queued (read without the lock on every pump).
  std::unique_ptr<std::atomic<bool>[]> has_queued_;
};

}  // namespace dsgd::sim
