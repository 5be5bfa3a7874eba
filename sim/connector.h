// Connector: how a simulated node gets its connections. A node connects to a peer when it
// first sends to it (dial), and takes the connections peers made to it (take_incoming)
// when a wake-up says there are some, so a run opens only the pairs that talk. Two kinds:
// the nodes of one process share a LoopbackHub (loopback_hub.h); a node that is a process
// of its own (dsgd node) has a NodeListener (node_listener.h).
// Not the data path: the node reads and writes its connections itself (node_io.cpp).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace dsgd::sim {

// A connection another rank made to this node, its end now this node's.
struct Incoming {
  int peer = -1;
  int fd = -1;
};

// What dial() made.
struct Dialed {
  int fd = -1;                 // -1: no connection; `why` says why (the peer crashed, ...)
  bool connecting = false;     // a non-blocking connect under way: usable once writable
  std::vector<uint8_t> hello;  // a whole frame to send before any other (empty: none)
  std::string where;           // the peer's address ("127.0.0.1:40123"), for messages
  std::string why;
};

// Why connections were refused or closed, in order. Any thread.
class RefusalLog {
 public:
  void add(std::string line) {
    std::lock_guard lock(mutex_);
    lines_.push_back(std::move(line));
  }
  std::vector<std::string> lines() const {
    std::lock_guard lock(mutex_);
    return lines_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> lines_;
};

class Connector {
 public:
  virtual ~Connector() = default;
  // The port peers connect to (this node's, or the hub's that all nodes share).
  virtual uint16_t port() const = 0;
  // Starts taking connections; before, they wait in the kernel's backlog.
  virtual void start() = 0;
  // Rank thread: a connection to `peer`, which has none with this node yet. UsageError
  // when the process is out of file descriptors (naming the limit, fd_limit.h).
  virtual Dialed dial(int peer) = 0;
  // Rank thread: connections peers made to this node since the last call (cheap when none).
  virtual void take_incoming(std::vector<Incoming>& out) = 0;
  // Rank thread: the node crashed (its connections are down). Nodes of this process that
  // it never connected to learn it now, as the others learn it from EOF.
  virtual void crashed(const std::string& reason) = 0;
  // Stops taking connections. Idempotent; the node's own connections stay the node's.
  virtual void close() = 0;
};

}  // namespace dsgd::sim
