// SimNode: one simulated rank. A Communicator whose peers are reached over real TCP
// sockets (127.0.0.1 unless dsgd node listens wider). The rank's own thread moves the bytes, as an
// MPI library's progress engine does: isend writes at once what the socket takes, and every wait
// (or test) polls the node's sockets, reading whole frames into the Mailbox and writing what is
// queued, until its operation is done. So a message costs one wake-up per hop (the kernel
// waking the receiving rank), not a hand-off through an I/O thread on each side.
// Connections are made when a pair first talks (connector.h): the first send to a peer
// connects to it, and a wait also takes the connections peers made meanwhile, so a ring
// of 256 nodes holds 256 connections, not 256 x 255. The nodes of one process connect
// through their LoopbackHub; a node of its own process (dsgd node) through its NodeListener.
// A node sends to a peer on the first connection it had with it and reads every one: two
// nodes of different processes that connect to each other at the same moment keep both, one
// per direction, and each direction stays in order.
// The Network stamps each frame with its arrival time on the network clock and in model
// time; the receiver's Mailbox keeps it invisible until then.
// Not a launcher: run_cluster() (cluster.h) builds the nodes.
#pragma once

#include <utility>  // before Asio on g++ 12 (Boost 1.74)

#include <array>
#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <poll.h>
#include <string>
#include <thread>
#include <vector>

#include "core/comm/communicator.h"
#include "sim/connector.h"
#include "sim/frame.h"
#include "sim/handshake.h"
#include "sim/mailbox.h"
#include "sim/net_clock.h"
#include "sim/network.h"
#include "sim/rendezvous.h"

namespace dsgd::sim {

struct NodeOptions {
  // MPI's eager limit (Open MPI's TCP transport's default, btl_tcp_eager_limit): a send up
  // to this size is copied and completes at once; a larger one is sent from the caller's
  // buffer and completes only once the receiver has matched it with a posted receive (the
  // rendezvous protocol), so two ranks that both send such a message before receiving
  // deadlock, as under Open MPI. Model time: the send ends at the match (the handshake's
  // own latency is not counted). Messages a node sends itself are always eager.
  size_t eager_bytes = 64 * 1024;
  double gflops = 20.0;                  // model time of compute: flops / (gflops * 1e9)
  double straggler = 1.0;                // compute slowed by this factor (wall and model time)
  std::optional<int64_t> crash_at_step;  // the node dies when this step begins
  std::optional<double> crash_at_s;      // ... or at this network-clock time
  // Where peers connect: loopback unless `dsgd node --listen` asks for more.
  std::string listen_address = "127.0.0.1";
  // The exercise checker's rules of non-blocking sends, which MPI states and does not
  // check: a send's buffer must not change before its wait returns (checked by its CRC32C
  // at the wait: CommError), and every isend must be waited for (check_sends()).
  bool guard_sends = false;
};

class LoopbackHub;
class NodeListener;

// Thrown inside a node's thread when a crash fault fires; the launcher closes the node's
// connections, as the death of a process would, and lets the others find out.
struct NodeCrashed {
  int rank;
};

class SimNode final : public Communicator, private MailboxDriver {
 public:
  // A node of its own process: it listens on options.listen_address (NodeListener).
  SimNode(int rank, int world, const NodeOptions& options, Network& network, NetClock& clock);
  // A node that shares this process with the others of `hub`.
  SimNode(int rank, int world, const NodeOptions& options, Network& network, NetClock& clock,
          LoopbackHub& hub);
  ~SimNode() override;
  SimNode(const SimNode&) = delete;
  SimNode& operator=(const SimNode&) = delete;

  int rank() const override { return rank_; }
  // Why nothing can cross the link src -> dst from now on (an outage that never ends), or "".
  std::string outage_note(int src, int dst) const;
  int size() const override { return world_; }
  const char* backend() const override { return "sim"; }
  double model_s() const override { return model_now_s_.load(std::memory_order_relaxed); }
  // Moves this node's model clock forward to t (never back): compute that ran beside the
  // communication ended at t. Benchmarks use it to start every node of a measurement at the
  // same model time.
  void advance_model_to(double t) override {
    model_now_s_.store(std::max(model_s(), t), std::memory_order_relaxed);
  }
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
  double compute_model_s(double flops) const override;  // flops / gflops, times straggler
  void straggle(double measured_s) const override;
  void on_step(int64_t step) override;
  // Called as each step begins, after the crash fault's check, on the rank thread: an elastic
  // run's rank 0 ends a round there, by throwing, to let a node join (node_process.h).
  void set_step_check(std::function<void(int64_t step)> check) { step_check_ = std::move(check); }
  std::string failure() override;  // reads what is ready first, so it sees a peer drop

  // --- set-up, before start() -------------------------------------------------------
  // Where peers connect: this node's own port, or its hub's.
  uint16_t port() const;
  // A node of its own process: the token (and epoch) every connection's hello carries and
  // must match (handshake.h), and where each rank listens (by rank; this node's own entry
  // is not used).
  void set_job(const JobIdentity& job);
  void set_peer_addresses(std::vector<PeerAddress> peers);
  // false when the nodes' network clocks differ (dsgd node on several machines): frames
  // then carry the link delay the sender computed, and a message becomes visible that long
  // after its bytes arrive (the real transfer time counts twice) instead of at a common time.
  void set_shared_clock(bool shared) { shared_clock_ = shared; }
  // Starts taking connections (before, peers' connections wait in the kernel's backlog).
  // From then on, one thread at a time calls send, recv and wait: the rank thread (it may
  // differ from the one that did the set-up), or a thread it hands the node to and waits
  // for, as the trainer does with its communication thread (bucket_reducer.h).
  void start();
  // Why each connection was refused or closed so far (foreign connections, and peers that
  // sent a bad or corrupt frame), in order. Any thread.
  std::vector<std::string> refusals() const { return refusals_.lines(); }

  // --- run ---------------------------------------------------------------------------
  Mailbox& mailbox() { return mailbox_; }
  // Messages to other ranks handed to the network / received into the mailbox so far;
  // equal sums over a cluster mean nothing is in flight.
  uint64_t messages_sent() const { return sent_.load(std::memory_order_acquire); }
  uint64_t messages_received() const { return received_.load(std::memory_order_acquire); }
  // The same for the `matched` answers to sends above the eager limit (frame.h).
  uint64_t matches_sent() const { return matches_sent_.load(std::memory_order_acquire); }
  uint64_t matches_received() const { return matches_received_.load(std::memory_order_acquire); }
  size_t eager_bytes() const { return options_.eager_bytes; }
  // Rank thread: writes until every queued frame is in the kernel (or the deadline).
  void flush(Clock::time_point deadline);
  // With NodeOptions::guard_sends, after the node function: CommError naming the first send
  // whose request was dropped without a wait.
  void check_sends() const;
  // Any thread: fails every pending and future operation with `reason` and shuts every
  // connection down (peers see EOF).
  void abort(const std::string& reason);
  // Rank thread, once its function failed: fails what is still pending (their buffers may
  // be gone), then tells every peer still connected why this node leaves (a farewell frame,
  // frame.h), waiting at most 200 ms for those frames to be written and reading nothing, so
  // that a peer waiting for this node names the cause instead of a closed connection.
  void leave(const std::string& reason);
  // Rank thread: drops every connection at once, as a crashed process would (peers see EOF).
  void crash();
  // Closes every socket, stops the I/O thread and joins it. Idempotent.
  void close();

 protected:
  Request do_isend(std::span<const float> data, int dst, int tag) override;
  Request do_irecv(std::span<float> data, int src, int tag) override;

 private:
  friend class SimRequest;
  Request send_request(std::shared_ptr<OpState> op, std::span<const float> data);
  std::string unwaited_send_;  // NodeOptions::guard_sends: the first send never waited for
  static constexpr size_t kStageBytes = 64 * 1024;  // one read of small frames
  struct OutFrame {
    HeaderBytes header;
    std::vector<float> owned;     // eager copy, made only if the socket did not take it all
    std::span<const float> data;  // what is sent (owned or the caller's buffer)
    std::shared_ptr<OpState> op;  // completed when written; null if already done
    size_t written = 0;           // bytes of header + data in the kernel so far
    size_t size() const { return header.size() + data.size_bytes(); }
  };
  // One TCP connection with a peer, and the frame being read from it (rank thread).
  struct Link {
    int fd = -1;              // shut down, never closed, when the peer is lost (see fds_)
    bool connecting = false;  // a non-blocking connect under way (dsgd node)
    std::string where;        // the peer's address when this node dialled it
    HeaderBytes in_header{};
    size_t in_header_bytes = 0;  // of the header being read
    bool in_body = false;        // in_frame decoded; reading its payload
    FrameHeader in_frame;
    Payload in_payload;
    std::shared_ptr<OpState> in_target;  // or straight into this receive (Mailbox::claim)
    uint64_t in_done = 0;                // payload bytes read so far ...
    uint32_t in_crc = 0;  // ... and their CRC32C, computed while they are hot in cache
    int rcvlowat = 1;     // the socket's SO_RCVLOWAT now (sim/node_io.cpp)
  };
  struct Peer {
    // links[0] carries this node's frames to the peer; a second link (two processes that
    // dialled each other at once) only brings the peer's. Rank thread only, like the rest.
    std::array<Link, 2> links;
    int link_count = 0;
    bool lost = false;
    std::string farewell;         // why the peer left, from its farewell frame
    bool closing = false;         // one of its connections has ended
    std::deque<OutFrame> outbox;  // written in order; the front may be partly written
    // Sends above the eager limit waiting for the peer's `matched` frame: (seq, op).
    std::deque<std::pair<uint64_t, std::shared_ptr<OpState>>> awaiting_match;
    uint64_t next_seq = 0;
    // Arrival times of the last message to this peer: later messages never arrive earlier
    // (FIFO per link, as over TCP), whatever the lag correction or jitter say.
    double last_net_s = 0, last_model_s = 0;
    double in_last_visible_s = 0;  // clocks not shared: FIFO of visibility
  };

  // MailboxDriver (node_io.cpp): the progress engine.
  void pump(Clock::time_point until) override;  // rank thread
  void wake() override;                         // any thread

  SimNode(int rank, int world, const NodeOptions& options, Network& network, NetClock& clock,
          LoopbackHub* hub);
  // Rank thread (node_links.cpp): connections made and taken.
  bool open_link(int dst, const std::shared_ptr<OpState>& op);  // false: op failed
  void take_incoming();
  void add_link(int peer, int fd, bool connecting = false, std::string where = "");
  void finish_connect(int peer);
  void await_connect(int peer);
  bool has_link(int peer) const { return peers_[peer]->link_count > 0; }
  // Rank thread (node_io.cpp):
  void poll_links(Clock::time_point until);
  void write_peer(int dst);                  // writes queued frames until the kernel balks
  void read_link(int src, Link& link);       // read_available, then set_low_water
  void read_available(int src, Link& link);  // until drained (or a budget is spent)
  void set_low_water(Link& link);            // SO_RCVLOWAT for the payload being read
  bool consume(int src, Link& link, const uint8_t* bytes, size_t n);  // false once dropped
  bool payload_done(int src, Link& link);                             // delivers; false if dropped
  uint8_t* body_at(Link& link);  // where the next payload byte of link's frame goes
  void bad_frame(int src, const std::string& why);
  void drop_peer(int peer, const std::string& reason);
  // A connection of `src` ended: what its other connection holds (a farewell) is read
  // first, then the peer is dropped.
  void peer_closed(int src, Link& closed);
  void drop_unsent(Peer& peer, const std::string& reason);  // leave(): frames not started
  // Rendezvous (node_io.cpp): tells senders their messages were matched; a peer's answer.
  void send_matches();
  bool take_match(int src, const FrameHeader& header);  // false once the peer is dropped
  void check_crash_time();
  void observe_arrival(const OpState& op);

  const int rank_;
  const int world_;
  const NodeOptions options_;
  // Whether payloads carry a CRC32C that the receiver checks. Between processes (dsgd
  // node), yes: the frame check against foreign or broken peers. Between the nodes of one
  // process (LoopbackHub), no: the hub lets in only the connections it made itself, which
  // the kernel vouches for, and loopback moves bytes by memcpy, so the check could only
  // catch dsgd's own bugs, at a sixth of a large all_reduce's CPU on a CPU without
  // VPCLMULQDQ. Such frames carry 0 in the header's CRC field.
  const bool checksums_;
  JobIdentity job_;
  bool shared_clock_ = true;
  Network& network_;
  NetClock& clock_;
  std::vector<std::unique_ptr<Peer>> peers_;
  Mailbox mailbox_;
  RefusalLog refusals_;
  std::unique_ptr<Connector> connector_;
  NodeListener* listener_ = nullptr;  // connector_, when the node has a port of its own
  // This node's model clock: written by the thread that talks, read by any (the trainer's
  // compute thread stamps its events while a bucket's all_reduce is under way).
  std::atomic<double> model_now_s_ = 0;
  // How late this thread woke for the message it last waited for, plus the time its sends
  // since then spent in the transport (capped): scheduler latency and per-message CPU,
  // artefacts of simulating on few cores, not part of the modelled network. Sends are
  // stamped as if the thread had woken on time and sent instantly, so the lag does not add
  // up hop by hop.
  double lag_s_ = 0;
  static constexpr double kMaxLagS = 0.0005;  // the most a send is stamped early
  double last_arrival_net_s_ = 0;   // rank thread: latest visible time of a received message
  int wake_fd_ = -1;                // eventfd: wake() makes the rank thread's poll return
  std::vector<uint8_t> stage_;      // rank thread: what one read takes from a socket
  std::vector<int> linked_;         // rank thread: peers with a link, in the order made
  std::vector<Incoming> incoming_;  // rank thread: take_incoming()'s, reused
  std::vector<pollfd> poll_fds_;    // rank thread: pump()'s poll set, reused
  std::vector<std::pair<int, int>> poll_links_;  // (peer, link) behind each entry after the first
  std::atomic<bool> abort_requested_{false};     // abort() from another thread: drop every peer
  std::atomic<int> frames_queued_{0};            // in outboxes, not yet wholly written
  std::atomic<bool> closing_{false};
  std::atomic<uint64_t> sent_{0}, received_{0};
  std::atomic<uint64_t> matches_sent_{0}, matches_received_{0};
  // Every connection's descriptor: abort() shuts them down from any thread, close() closes
  // them. The rank thread adds to it as it connects.
  std::mutex fds_mutex_;
  std::vector<int> fds_;
  std::function<void(int64_t)> step_check_;  // set_step_check()'s
};

}  // namespace dsgd::sim
