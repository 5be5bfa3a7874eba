// SimNode: one simulated rank. A Communicator whose peers are reached over real TCP
// sockets on 127.0.0.1, owned by the node's own io_context and I/O thread; the rank's
// thread reaches them only through post(). One write in flight per socket, the rest
// queued. The Network stamps each frame with its arrival time on the network clock and in
// model time; the receiver's Mailbox keeps it invisible until then.
// Not a launcher: run_cluster() (cluster.h) builds and wires the nodes.
#pragma once

#include <utility>  // before Asio on g++ 12 (Boost 1.74)

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <deque>
#include <boost/asio/steady_timer.hpp>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/comm/communicator.h"
#include "sim/frame.h"
#include "sim/handshake.h"
#include "sim/mailbox.h"
#include "sim/net_clock.h"
#include "sim/network.h"

namespace dsgd::sim {

struct NodeOptions {
  // Sends up to this size are copied and complete at once (like MPI's eager protocol);
  // larger ones are sent from the caller's buffer and complete when written.
  size_t eager_bytes = 64 * 1024;
  double gflops = 20.0;                  // model time of compute: flops / (gflops * 1e9)
  double straggler = 1.0;                // compute slowed by this factor (wall and model time)
  std::optional<int64_t> crash_at_step;  // the node dies when this step begins
  std::optional<double> crash_at_s;      // ... or at this network-clock time
  // Where peers connect: loopback unless `dsgd node --listen` asks for more.
  std::string listen_address = "127.0.0.1";
};

// Thrown inside a node's thread when a crash fault fires; the launcher closes the node's
// connections, as the death of a process would, and lets the others find out.
struct NodeCrashed {
  int rank;
};

class SimNode final : public Communicator {
 public:
  SimNode(int rank, int world, const NodeOptions& options, Network& network, NetClock& clock);
  ~SimNode() override;
  SimNode(const SimNode&) = delete;
  SimNode& operator=(const SimNode&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return world_; }
  const char* backend() const override { return "sim"; }
  double model_s() const override { return model_now_s_; }
  // Moves this node's model clock forward to t (never back). Benchmarks use it to start
  // every node of a measurement at the same model time.
  void advance_model_to(double t) { model_now_s_ = std::max(model_now_s_, t); }
  void on_compute(double measured_s, double flops) override;
  void on_step(int64_t step) override;

  // --- set-up, before start() -------------------------------------------------------
  uint16_t port() const;
  // The token (and epoch) every connection's hello carries and must match (handshake.h).
  void set_job(const JobIdentity& job) { job_ = job; }
  // false when the nodes' network clocks differ (dsgd node on several machines): frames
  // then carry the link delay the sender computed, and a message becomes visible that long
  // after its bytes arrive (the real transfer time counts twice) instead of at a common time.
  void set_shared_clock(bool shared) { shared_clock_ = shared; }
  // Blocking, within timeout(): connects to `peer`'s listening port and sends the hello.
  void connect(int peer, uint16_t port, const std::string& host = "127.0.0.1");
  // Blocking: accepts connections until one sends a valid hello from a rank not yet
  // connected; others (wrong token or version, garbage, silence for kHelloTimeout) are
  // refused with a line on stderr. TimeoutError naming the missing ranks after timeout().
  void accept_one();
  // Starts the I/O thread. From then on the node still accepts connections, but only to
  // refuse them (every rank is connected): each is read up to its hello, within
  // kHelloTimeout, and closed with a line on stderr saying why.
  void start();
  // Why each connection was refused or closed so far (set-up, late strangers, and peers
  // that sent a bad or corrupt frame), in order. Any thread.
  std::vector<std::string> refusals() const;

  // --- run ---------------------------------------------------------------------------
  Mailbox& mailbox() { return mailbox_; }
  // Messages to other ranks handed to the network / received into the mailbox so far;
  // equal sums over a cluster mean nothing is in flight.
  uint64_t messages_sent() const { return sent_.load(std::memory_order_acquire); }
  uint64_t messages_received() const { return received_.load(std::memory_order_acquire); }
  // Waits until every queued frame has been handed to the kernel (or the deadline).
  void flush(Clock::time_point deadline);
  // Fails every pending and future operation with `reason` and drops all connections.
  void abort(const std::string& reason);
  // Drops every connection at once, as a crashed process would (peers see EOF).
  void crash();
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
  struct Peer {
    std::unique_ptr<boost::asio::ip::tcp::socket> socket;
    // I/O thread only:
    std::deque<OutFrame> outbox;
    bool writing = false;
    HeaderBytes in_header{};
    FrameHeader in_frame;
    Payload in_payload;
    uint64_t in_done = 0;  // payload bytes read so far ...
    uint32_t in_crc = 0;   // ... and their CRC32C, computed while they are hot in cache
    // Rank thread only:
    uint64_t next_seq = 0;
    // Arrival times of the last message to this peer: later messages never arrive earlier
    // (FIFO per link, as over TCP), whatever the lag correction or jitter say.
    double last_net_s = 0, last_model_s = 0;
    double in_last_visible_s = 0;  // I/O thread, clocks not shared: FIFO of visibility
  };

  // A connection accepted after start(): read up to its hello, then refused.
  struct Stranger {
    explicit Stranger(boost::asio::io_context& io) : socket(io), timer(io) {}
    boost::asio::ip::tcp::socket socket;
    boost::asio::steady_timer timer;  // kHelloTimeout
    HeaderBytes header{};
    FrameHeader frame;
    std::vector<uint8_t> payload;
  };

  void attach(int peer, std::unique_ptr<boost::asio::ip::tcp::socket> socket);
  void accept_strangers();                                                         // I/O thread
  void read_stranger(const std::shared_ptr<Stranger>& stranger);                   // I/O thread
  void refuse(const std::shared_ptr<Stranger>& stranger, const std::string& why);  // I/O
  void note_refusal(const std::string& line);                                      // any thread
  void bad_frame(int src, const std::string& why);                                 // I/O thread
  void enqueue(int dst, OutFrame frame);                                           // I/O thread
  void write_next(int dst);                                                        // I/O thread
  void read_header(int src);                                                       // I/O thread
  void read_payload(int src);                                                      // I/O thread
  void read_payload_some(int src);                                                 // I/O thread
  void payload_done(int src);                                                      // I/O thread
  void drop_peer(int peer, const std::string& reason);                             // I/O thread
  void break_link(int peer, const std::string& reason);  // any thread: posts drop_peer
  void check_crash_time();                               // rank thread
  void observe_arrival(const OpState& op);               // rank thread
  double net_now_s() const;                              // rank thread, see lag_s_

  const int rank_;
  const int world_;
  const NodeOptions options_;
  JobIdentity job_;
  bool shared_clock_ = true;
  Network& network_;
  NetClock& clock_;
  boost::asio::io_context io_;
  std::unique_ptr<boost::asio::ip::tcp::acceptor> acceptor_;
  std::vector<std::unique_ptr<Peer>> peers_;
  Mailbox mailbox_;
  double model_now_s_ = 0;  // rank thread: this node's model clock
  // How late this thread woke for the message it last waited for (capped): scheduler
  // latency, an artefact of simulating on few cores, not part of the modelled network.
  // Sends are stamped as if the thread had woken on time, so the lag does not add up hop
  // by hop.
  double lag_s_ = 0;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
  std::thread io_thread_;
  std::atomic<int> frames_queued_{0};  // posted but not yet written, across all peers
  std::atomic<bool> closing_{false};
  std::atomic<uint64_t> sent_{0}, received_{0};
  std::list<std::shared_ptr<Stranger>> strangers_;  // I/O thread: being read, then refused
  mutable std::mutex refusals_mutex_;
  std::vector<std::string> refusals_;
};

}  // namespace dsgd::sim
