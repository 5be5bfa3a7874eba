// Mailbox: one simulated node's receive side and the state of its requests. Holds messages
// that arrived before anyone asked for them ("unexpected"), receives posted but not yet
// matched, and which peers are lost. Matching follows MPI: a message goes to the earliest
// posted receive whose (source, tag) fits, and a receive takes the earliest fitting
// message, so one sender's messages with one tag are received in the order sent.
// Shared by the node's thread (post, wait) and its I/O thread (deliver, lost) under one lock.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "core/comm/communicator.h"

namespace dsgd::sim {

struct Message {
  int source = 0;
  int tag = 0;
  uint64_t seq = 0;
  std::vector<float> payload;
};

// State of one isend or irecv, guarded by the owning Mailbox's lock.
struct OpState {
  bool is_recv = false;
  int peer = kAnySource;  // destination of a send; requested source of a receive
  int tag = 0;
  std::span<float> buffer;  // receive buffer
  bool done = false;
  Status status;
  std::exception_ptr error;
};

class Mailbox {
 public:
  Mailbox(int rank, int world);

  // Node thread. Matches an unexpected message at once if one fits.
  std::shared_ptr<OpState> post_recv(std::span<float> buffer, int source, int tag);
  std::shared_ptr<OpState> new_send(int dst, int tag);
  // Blocks until `op` is done or the deadline passes; returns false on timeout.
  bool wait_until(const std::shared_ptr<OpState>& op, Clock::time_point deadline);
  // Withdraws a posted receive (after a timeout). Returns false if it completed meanwhile.
  bool cancel_recv(const std::shared_ptr<OpState>& op);
  // Throws the error of a failed send to `dst` before it is queued (peer lost, aborted).
  void check_can_send(int dst);

  // I/O thread (or the node's own thread for a message to itself).
  void deliver(Message&& message);
  void complete(const std::shared_ptr<OpState>& op, std::exception_ptr error = nullptr);
  void peer_lost(int peer, const std::string& reason);
  // Fails every pending and future operation with `reason` (the launcher's abort).
  void abort(const std::string& reason);

  // Throws the stored error if `op` failed; returns its status otherwise. Caller holds no lock.
  static Status result(const OpState& op);

 private:
  void complete_locked(OpState& op, std::exception_ptr error);
  bool fits(const OpState& op, const Message& m) const;
  void fill_locked(OpState& op, Message& m);  // copies the payload, checks the size
  std::exception_ptr lost_error_locked(const OpState& op) const;

  const int rank_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Message> unexpected_;
  std::list<std::shared_ptr<OpState>> posted_;
  std::vector<std::string> lost_;  // per peer: why it was lost, empty while alive
  int lost_count_ = 0;
  std::string aborted_;
};

}  // namespace dsgd::sim
