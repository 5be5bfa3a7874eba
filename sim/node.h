// SimNode: one simulated rank. A Communicator whose peers are reached over real TCP
// sockets on 127.0.0.1, owned by the node's own io_context and I/O thread; the rank's
// thread reaches them only through post(). One write in flight per socket, the rest
// queued. The link model stamps each frame with the time it arrives; the receiver holds
// it until then. Not a launcher: run_cluster() (cluster.h) builds and wires the nodes.
#pragma once

#include <utility>  // before Asio on g++ 12 (Boost 1.74)

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/steady_timer.hpp>
#include <optional>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/comm/communicator.h"
#include "sim/frame.h"
#include "sim/link_model.h"
#include "sim/mailbox.h"

namespace dsgd::sim {

struct NodeOptions {
  LinkParams link;  // every link out of this node
  // Sends up to this size are copied and complete at once (like MPI's eager protocol);
  // larger ones are sent from the caller's buffer and complete when written.
  size_t eager_bytes = 64 * 1024;
};

class SimNode final : public Communicator {
 public:
  SimNode(int rank, int world, const NodeOptions& options);
  ~SimNode() override;
  SimNode(const SimNode&) = delete;
  SimNode& operator=(const SimNode&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return world_; }
  const char* backend() const override { return "sim"; }

  // --- set-up, before start() -------------------------------------------------------
  uint16_t port() const;
  boost::asio::io_context& io() { return io_; }
  // Blocking: connects to `peer`'s listening port and introduces this rank.
  void connect(int peer, uint16_t port);
  // Blocking: accepts one connection and reads which rank it is.
  void accept_one();
  void start();

  // --- run ---------------------------------------------------------------------------
  // Waits until every queued frame has been handed to the kernel (or the deadline).
  void flush(Clock::time_point deadline);
  // Fails every pending and future operation with `reason` and drops all connections.
  void abort(const std::string& reason);
  // Closes every socket, stops the I/O thread and joins it. Idempotent.
  void close();

 protected:
  Request do_isend(std::span<const float> data, int dst, int tag) override;
  Request do_irecv(std::span<float> data, int src, int tag) override;

 private:
  friend class SimRequest;
  struct OutFrame {
    HeaderBytes header;
    std::vector<float> owned;     // eager copy
    std::span<const float> data;  // what is sent (owned or the caller's buffer)
    std::shared_ptr<OpState> op;  // completed when written; null if already done
  };
  struct Held {
    int64_t deliver_at_ns;
    Message message;
  };
  struct Peer {
    explicit Peer(boost::asio::io_context& io) : hold_timer(io) {}
    std::unique_ptr<boost::asio::ip::tcp::socket> socket;
    // I/O thread only:
    std::deque<OutFrame> outbox;
    bool writing = false;
    HeaderBytes in_header{};
    FrameHeader in_frame;
    std::vector<float> in_payload;
    std::deque<Held> held;  // arrived early by wall time; delivered in order, on time
    int64_t last_deliver_ns = 0;
    boost::asio::steady_timer hold_timer;
    // Rank thread only:
    LinkClock link_clock;
    uint64_t next_seq = 0;
  };

  void attach(int peer, std::unique_ptr<boost::asio::ip::tcp::socket> socket);
  void enqueue(int dst, OutFrame frame);                         // I/O thread
  void write_next(int dst);                                      // I/O thread
  void read_header(int src);                                     // I/O thread
  void read_payload(int src);                                    // I/O thread
  void arrive(int src, Message message, int64_t deliver_at_ns);  // I/O thread
  void release_held(int src);                                    // I/O thread
  void drop_peer(int peer, const std::string& reason);           // I/O thread
  void break_link(int peer, const std::string& reason);          // any thread: posts drop_peer
  int64_t now_ns() const;

  const int rank_;
  const int world_;
  const NodeOptions options_;
  boost::asio::io_context io_;
  std::unique_ptr<boost::asio::ip::tcp::acceptor> acceptor_;
  std::vector<std::unique_ptr<Peer>> peers_;
  Mailbox mailbox_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
  std::thread io_thread_;
  std::atomic<int> frames_queued_{0};  // posted but not yet written, across all peers
  std::atomic<bool> closing_{false};
};

}  // namespace dsgd::sim
