// Mailbox: one simulated node's receive side and the state of its requests. Messages are
// handed in by the I/O thread as soon as their bytes arrive, but become visible only at
// the time the link model says they arrive (or, in step mode, when the step gate releases
// them). Matching follows MPI: a visible message goes to the earliest posted receive whose
// (source, tag) fits; among visible messages the earliest to arrive is matched first, so
// one sender's messages with one tag are received in the order sent.
// Shared under one lock by the node's thread (post, wait, and deliver: the node thread
// reads its own sockets while it waits, see MailboxDriver) and by the launcher, the step
// gate and the GUI (abort, set_mode, release, snapshot), which wake it through the driver.
#pragma once

#include <atomic>
#include <deque>
#include <exception>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/comm/communicator.h"
#include "sim/net_clock.h"

namespace dsgd::sim {

// A vector whose resize() leaves new floats uninitialised: a receive buffer is about to be
// overwritten by the socket, so zeroing it first would only cost time and page faults.
template <typename T>
struct NoInitAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = NoInitAllocator<U>;
  };
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
using Payload = std::vector<float, NoInitAllocator<float>>;

struct Message {
  int source = 0;
  int dest = 0;
  int tag = 0;
  uint64_t seq = 0;
  Payload payload;
  double visible_net_s = 0;  // network-clock time it arrives
  double model_s = 0;        // model time it arrives
  bool released = false;     // step mode: let through by the gate
  bool sync = false;         // its sender waits until it is matched (above the eager limit)
  // Read straight into this posted receive's buffer (Mailbox::claim); payload is empty.
  const struct OpState* claimed = nullptr;
  size_t count() const;  // floats
};

// State of one isend or irecv, guarded by the owning Mailbox's lock.
struct OpState {
  bool is_recv = false;
  int peer = kAnySource;  // destination of a send; requested source of a receive
  int tag = 0;
  std::span<float> buffer;  // receive buffer
  bool done = false;
  Status status;
  double model_s = 0;         // receive: model time the matched message arrived; send: its match
  double visible_net_s = 0;   // receive: network time the matched message became visible
  double posted_model_s = 0;  // receive: the receiver's model time when it was posted
  bool blocked = false;       // the waiting thread had to sleep for it
  bool claimed = false;       // a frame is being (or was) read straight into buffer
  std::exception_ptr error;
};

// What a Mailbox's waits sleep in: the node's progress engine. pump() moves bytes between
// the node's sockets and its mailbox until `until` (or sooner, when something happened);
// wake() makes a pump in progress return (any thread).
class MailboxDriver {
 public:
  virtual void pump(Clock::time_point until) = 0;
  virtual void wake() = 0;

 protected:
  ~MailboxDriver() = default;
};

// How messages become visible: by the network clock, or one at a time by the step gate.
enum class GateMode { run, step };

class Mailbox {
 public:
  Mailbox(int rank, int world, const NetClock& clock, MailboxDriver& driver);

  // Node thread. Matches a visible message at once if one fits. model_s: the node's model
  // time now (a message that arrived earlier is matched then).
  std::shared_ptr<OpState> post_recv(std::span<float> buffer, int source, int tag, double model_s);
  std::shared_ptr<OpState> new_send(int dst, int tag);
  // Blocks until `op` is done or the deadline passes; returns false on timeout. While it
  // blocks, the node counts as waiting on `op` (deadlock detection, step gate).
  bool wait_until(const std::shared_ptr<OpState>& op, Clock::time_point deadline);
  bool poll(const std::shared_ptr<OpState>& op);  // non-blocking: done?
  // Withdraws a posted receive (after a timeout). Returns false if it completed meanwhile.
  bool cancel_recv(const std::shared_ptr<OpState>& op);
  // Throws the error of a failed send to `dst` before it is queued (peer lost, aborted).
  void check_can_send(int dst);

  // The node's thread (its progress engine), or any thread for complete/peer_lost/abort.
  void deliver(Message&& message);
  void complete(const std::shared_ptr<OpState>& op, std::exception_ptr error = nullptr);
  void peer_lost(int peer, const std::string& reason);
  // Fails every pending and future operation with `reason` (the launcher's abort).
  void abort(const std::string& reason);
  // The abort's reason, else the first lost peer's ("rank 2: crashed"), else "".
  std::string failure() const;

  // Zero-copy receive (the progress engine, on the node's thread). When a frame's header
  // arrives, claim() returns the posted receive it is certain to match, if there is one:
  // run mode, a receive from exactly `source` with `tag` and `count` floats, the first
  // posted one that fits, and no message held for it. The payload may then be read
  // straight into its buffer for as long as claim_valid() says so (a timeout or an abort
  // ends the claim); deliver_claimed() then hands in the message, without payload.
  std::shared_ptr<OpState> claim(int source, int tag, size_t count);
  bool claim_valid(const OpState& op);
  void deliver_claimed(Message&& message, const std::shared_ptr<OpState>& op);

  // A message whose sender waits for its match (Message::sync) met its receive: the node
  // tells the sender (a `matched` frame, sim/frame.h). model_s: when, in model time.
  struct Match {
    int source = 0;
    int tag = 0;
    uint64_t seq = 0;
    double model_s = 0;
  };
  // The node thread: the matches made since the last call, in order; any thread may make
  // them (the step gate's release), and a pump is woken for them.
  std::vector<Match> take_matches();

  // Gate and monitor (any thread).
  void set_mode(GateMode mode);
  void set_done();
  void wake();  // re-check the clock (pause, speed) and the gate
  struct Snapshot {
    bool done = false;
    bool waiting = false;      // blocked in wait on an incomplete operation
    bool satisfiable = false;  // some message held here fits the awaited receive
    bool waiting_recv = false;
    int peer = kAnySource, tag = 0;
    size_t send_count = 0;         // floats of the awaited send
    bool matches_pending = false;  // matches not yet told to their senders
    // Earliest unreleased message (step mode), by (model time, source, seq).
    std::optional<Message> next;  // payload: up to its first 4 values
    size_t next_count = 0;        // next's full size in floats
  };
  Snapshot snapshot();
  // Step mode: lets the message (source, seq) through. Returns false if it is not here.
  bool release(int source, uint64_t seq);

  // Receive buffers handed back after their message was copied out, for the I/O thread to
  // reuse: large messages then cost no allocation and no page faults after the first.
  Payload take_buffer(size_t count);
  void give_buffer(Payload&& buffer);  // for take_buffer to hand out again

  // Throws the stored error if `op` failed; returns its status otherwise. Caller holds no lock.
  static Status result(const OpState& op);

 private:
  bool visible_locked(const Message& m, double net_now) const;
  bool fits(const OpState& op, const Message& m) const;
  void progress_locked();  // matches visible messages to posted receives
  void fill_locked(OpState& op, Message& m);
  void matched_locked(const OpState& op, const Message& m);  // records a sync message's match
  void complete_locked(OpState& op, std::exception_ptr error);
  // Ends op's claim. Its message, if delivered already, keeps a copy of the data (keep) or
  // is dropped with the failed receive.
  void end_claim_locked(OpState& op, bool keep);
  void give_buffer_locked(Payload&& buffer);
  std::exception_ptr lost_error_locked(const OpState& op) const;
  // Earliest network time a held message fitting a posted receive becomes visible.
  std::optional<double> next_visible_locked() const;

  const int rank_;
  void notify();  // after a change under the lock: wakes the node thread if it sleeps

  const NetClock& clock_;
  MailboxDriver& driver_;
  mutable std::mutex mutex_;
  // Set by the node thread, under the lock, before it last checked for completion and
  // until its pump returns: a change made after that check must wake the pump.
  std::atomic<bool> sleeping_{false};
  std::list<Message> arrived_;  // in arrival order
  std::list<std::shared_ptr<OpState>> posted_;
  std::vector<std::string> lost_;  // per peer: why it was lost, empty while alive
  int lost_count_ = 0;
  std::string aborted_;
  GateMode mode_ = GateMode::run;
  const OpState* waiting_on_ = nullptr;
  std::vector<Payload> spare_;  // recycled receive buffers, at most kSpareBuffers
  std::vector<Match> matches_;  // for take_matches
  bool done_ = false;
};

}  // namespace dsgd::sim
