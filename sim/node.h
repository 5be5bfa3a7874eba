// SimNode: one simulated rank. A Communicator whose peers are reached over real TCP
// sockets on 127.0.0.1. The rank's own thread moves the bytes, as an MPI library's
// progress engine does: isend writes at once what the socket takes, and every wait (or
// test) polls the node's sockets, reading whole frames into the Mailbox and writing what is
// queued, until its operation is done. So a message costs one wake-up per hop (the kernel
// waking the receiving rank), not a hand-off through an I/O thread on each side. The I/O
// thread only accepts (and refuses) connections that arrive after start.
// The Network stamps each frame with its arrival time on the network clock and in model
// time; the receiver's Mailbox keeps it invisible until then.
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
#include <poll.h>
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

class SimNode final : public Communicator, private MailboxDriver {
 public:
  SimNode(int rank, int world, const NodeOptions& options, Network& network, NetClock& clock);
  ~SimNode() override;
  SimNode(const SimNode&) = delete;
  SimNode& operator=(const SimNode&) = delete;

  int rank() const override { return rank_; }
  // Why nothing can cross the link src -> dst from now on (an outage that never ends), or "".
  std::string outage_note(int src, int dst) const;
  int size() const override { return world_; }
  const char* backend() const override { return "sim"; }
  double model_s() const override { return model_now_s_; }
  // Moves this node's model clock forward to t (never back). Benchmarks use it to start
  // every node of a measurement at the same model time.
  void advance_model_to(double t) { model_now_s_ = std::max(model_now_s_, t); }
  // Network time now (the cluster's shared clock).
  double net_clock_s() const { return clock_.now_s(); }
  // A wait outside the simulated network (a benchmark's thread barrier) released this
  // thread at network time t. How late the thread then got a core is host lag, as after a
  // late wake for a message (see lag_s_), so its next sends are stamped as if it had
  // started at t: on 2 cores, 16 threads released together start up to ~1 ms apart.
  void released_at(double t);
  // The network time this node's next send is stamped with: now, less the thread's lag
  // (see lag_s_), never before the latest message it received.
  double net_now_s() const;
  void on_compute(double measured_s, double flops) override;
  void on_step(int64_t step) override;
  std::string failure() override;  // reads what is ready first, so it sees a peer drop

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
  // Takes over the peers' sockets and starts the I/O thread. From then on the node still
  // accepts connections, but only to refuse them (every rank is connected): each is read
  // up to its hello, within kHelloTimeout, and closed with a line on stderr saying why.
  // The rank thread that calls send, recv and wait from then on must be a single thread
  // (it may differ from the one that did the set-up).
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
  // Rank thread: writes until every queued frame is in the kernel (or the deadline).
  void flush(Clock::time_point deadline);
  // Any thread: fails every pending and future operation with `reason` and shuts every
  // connection down (peers see EOF).
  void abort(const std::string& reason);
  // Rank thread: drops every connection at once, as a crashed process would (peers see EOF).
  void crash();
  // Closes every socket, stops the I/O thread and joins it. Idempotent.
  void close();

 protected:
  Request do_isend(std::span<const float> data, int dst, int tag) override;
  Request do_irecv(std::span<float> data, int src, int tag) override;

 private:
  friend class SimRequest;
  static constexpr size_t kStageBytes = 64 * 1024;  // one read of small frames
  struct OutFrame {
    HeaderBytes header;
    std::vector<float> owned;     // eager copy, made only if the socket did not take it all
    std::span<const float> data;  // what is sent (owned or the caller's buffer)
    std::shared_ptr<OpState> op;  // completed when written; null if already done
    size_t written = 0;           // bytes of header + data in the kernel so far
    size_t size() const { return header.size() + data.size_bytes(); }
  };
  struct Peer {
    std::unique_ptr<boost::asio::ip::tcp::socket> socket;  // set-up, until start()
    int fd = -1;  // from start() until close(); shut down, never closed, when lost
    // Rank thread only:
    bool lost = false;
    std::deque<OutFrame> outbox;  // written in order; the front may be partly written
    HeaderBytes in_header{};
    size_t in_header_bytes = 0;  // of the header being read
    bool in_body = false;        // in_frame decoded; reading its payload
    FrameHeader in_frame;
    Payload in_payload;
    std::shared_ptr<OpState> in_target;  // or straight into this receive (Mailbox::claim)
    uint64_t in_done = 0;                // payload bytes read so far ...
    uint32_t in_crc = 0;  // ... and their CRC32C, computed while they are hot in cache
    int rcvlowat = 1;     // the socket's SO_RCVLOWAT now (sim/node_io.cpp)
    uint64_t next_seq = 0;
    // Arrival times of the last message to this peer: later messages never arrive earlier
    // (FIFO per link, as over TCP), whatever the lag correction or jitter say.
    double last_net_s = 0, last_model_s = 0;
    double in_last_visible_s = 0;  // clocks not shared: FIFO of visibility
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

  // MailboxDriver (node_io.cpp): the progress engine.
  void pump(Clock::time_point until) override;  // rank thread
  void wake() override;                         // any thread

  void attach(int peer, std::unique_ptr<boost::asio::ip::tcp::socket> socket);
  void accept_strangers();                                                         // I/O thread
  void read_stranger(const std::shared_ptr<Stranger>& stranger);                   // I/O thread
  void refuse(const std::shared_ptr<Stranger>& stranger, const std::string& why);  // I/O thread
  void note_refusal(const std::string& line);                                      // any thread
  // Rank thread (node_io.cpp):
  void write_peer(int dst);      // writes queued frames until the kernel balks
  void read_peer(int src);       // read_available, then set_low_water
  void read_available(int src);  // reads until the socket is drained (or a budget is spent)
  void set_low_water(Peer& p);   // SO_RCVLOWAT for the payload being read
  bool consume(int src, const uint8_t* bytes, size_t n);  // false once the peer is dropped
  bool payload_done(int src);                             // delivers; false if dropped
  uint8_t* body_at(Peer& peer);  // where the next payload byte of peer's frame goes
  void bad_frame(int src, const std::string& why);
  void drop_peer(int peer, const std::string& reason);
  void check_crash_time();
  void observe_arrival(const OpState& op);

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
  // How late this thread woke for the message it last waited for, plus the time its sends
  // since then spent in the transport (capped): scheduler latency and per-message CPU,
  // artefacts of simulating on few cores, not part of the modelled network. Sends are
  // stamped as if the thread had woken on time and sent instantly, so the lag does not add
  // up hop by hop.
  double lag_s_ = 0;
  static constexpr double kMaxLagS = 0.0005;  // the most a send is stamped early
  double last_arrival_net_s_ = 0;  // rank thread: latest visible time of a received message
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
  std::thread io_thread_;
  int wake_fd_ = -1;                          // eventfd: wake() makes the rank thread's poll return
  std::vector<uint8_t> stage_;                // rank thread: what one read takes from a socket
  std::vector<pollfd> poll_fds_;              // rank thread: pump()'s poll set, reused
  std::vector<int> poll_ranks_;               // the peer behind each entry (-1: wake_fd_)
  std::atomic<bool> abort_requested_{false};  // abort() from another thread: drop every peer
  std::atomic<int> frames_queued_{0};         // in outboxes, not yet wholly written
  std::atomic<bool> closing_{false};
  std::atomic<uint64_t> sent_{0}, received_{0};
  std::list<std::shared_ptr<Stranger>> strangers_;  // I/O thread: being read, then refused
  mutable std::mutex refusals_mutex_;
  std::vector<std::string> refusals_;
};

}  // namespace dsgd::sim
