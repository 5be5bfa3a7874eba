// NodeListener: the connections of a node that is a process of its own (dsgd node). It
// listens on the node's port; an I/O thread reads each new connection's hello, all of them
// at once, each within kHelloTimeout, and hands a valid one from a rank it has none from
// to the node (a queue and a wake-up); every other connection (wrong token or version,
// garbage, silence, a rank twice) is refused with a line on stderr. A connection that says
// nothing delays no other: the oldest of too many half-open ones is dropped, never the
// newest. dial() connects to a peer's address without blocking the node's thread; the hello
// goes first in the node's queue of frames.
// Two nodes that dial each other at the same moment end up with two connections; each
// sends on its own (node.h), so every direction keeps its order.
// Not the data path: the node reads and writes the connections itself.
#pragma once

#include <utility>  // before Asio on g++ 12 (Boost 1.74)

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "sim/connector.h"
#include "sim/handshake.h"
#include "sim/rendezvous.h"

namespace dsgd::sim {

class Mailbox;

class NodeListener final : public Connector {
 public:
  // Listens on `listen_address` (an IP address; UsageError otherwise) at a port of the
  // kernel's choice, for node `rank` of `world`, whose mailbox it wakes.
  NodeListener(int rank, int world, const std::string& listen_address, Mailbox& mailbox,
               RefusalLog& refusals);
  ~NodeListener() override;

  // Before start(): the job every hello carries, and where each rank listens.
  void set_job(const JobIdentity& job) { job_ = job; }
  void set_peers(std::vector<PeerAddress> peers) { peers_ = std::move(peers); }

  uint16_t port() const override;
  void start() override;
  Dialed dial(int peer) override;
  void take_incoming(std::vector<Incoming>& out) override;
  void crashed(const std::string&) override {}  // the others find out by EOF or deadline
  void close() override;

 private:
  // A connection being read up to its hello (I/O thread).
  struct Handshake {
    explicit Handshake(boost::asio::io_context& io) : socket(io), timer(io) {}
    boost::asio::ip::tcp::socket socket;
    boost::asio::steady_timer timer;  // kHelloTimeout
    HeaderBytes header{};
    FrameHeader frame;
    std::vector<uint8_t> payload;
  };
  using HandshakePtr = std::shared_ptr<Handshake>;

  // I/O thread:
  void accept_next();
  void read_hello(const HandshakePtr& h);
  void read_hello_payload(const HandshakePtr& h);
  void admit(const HandshakePtr& h, const Hello& hello);
  void refuse(const HandshakePtr& h, const std::string& why);
  void out_of_descriptors();

  const int rank_;
  const int world_;
  Mailbox& mailbox_;
  RefusalLog& refusals_;
  JobIdentity job_;
  std::vector<PeerAddress> peers_;
  boost::asio::io_context io_;
  std::unique_ptr<boost::asio::ip::tcp::acceptor> acceptor_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
  std::thread io_thread_;
  std::list<HandshakePtr> handshakes_;  // I/O thread: being read, oldest first
  std::vector<bool> admitted_;          // I/O thread: ranks whose connection was handed over
  std::mutex incoming_mutex_;
  std::vector<Incoming> incoming_;
  std::atomic<bool> has_incoming_{false};
};

}  // namespace dsgd::sim
