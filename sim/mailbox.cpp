#include "sim/mailbox.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "core/errors.h"

namespace dsgd::sim {

Mailbox::Mailbox(int rank, int world) : rank_(rank), lost_(world) {}

bool Mailbox::fits(const OpState& op, const Message& m) const {
  return (op.peer == kAnySource || op.peer == m.source) && op.tag == m.tag;
}

void Mailbox::fill_locked(OpState& op, Message& m) {
  const size_t count = m.payload.size();
  if (count != op.buffer.size()) {
    complete_locked(op, std::make_exception_ptr(UsageError(fmt::format(
                            "rank {}: recv buffer holds {} floats but the message from rank {} "
                            "(tag {}) has {} floats; size the buffer to match the send",
                            rank_, op.buffer.size(), m.source, m.tag, count))));
    return;
  }
  if (count) std::memcpy(op.buffer.data(), m.payload.data(), count * sizeof(float));
  op.status = {m.source, m.tag, count};
  complete_locked(op, nullptr);
}

void Mailbox::complete_locked(OpState& op, std::exception_ptr error) {
  op.done = true;
  op.error = std::move(error);
}

std::exception_ptr Mailbox::lost_error_locked(const OpState& op) const {
  if (!aborted_.empty()) return std::make_exception_ptr(CommError(aborted_, op.peer));
  if (op.peer != kAnySource && !lost_[op.peer].empty())
    return std::make_exception_ptr(CommError(
        fmt::format("rank {}: lost rank {} while waiting to {} it (tag {}): {}", rank_, op.peer,
                    op.is_recv ? "receive from" : "send to", op.tag, lost_[op.peer]),
        op.peer));
  // A receive from any source fails only when no other rank is left to send.
  if (op.peer == kAnySource && lost_count_ >= static_cast<int>(lost_.size()) - 1 &&
      lost_.size() > 1)
    return std::make_exception_ptr(
        CommError(fmt::format("rank {}: every other rank is lost; nobody can send", rank_), -1));
  return nullptr;
}

std::shared_ptr<OpState> Mailbox::post_recv(std::span<float> buffer, int source, int tag) {
  auto op = std::make_shared<OpState>();
  op->is_recv = true;
  op->peer = source;
  op->tag = tag;
  op->buffer = buffer;
  std::lock_guard lock(mutex_);
  // Messages that arrived before a peer was lost are still valid: look at them first.
  auto it = std::find_if(unexpected_.begin(), unexpected_.end(),
                         [&](const Message& m) { return fits(*op, m); });
  if (it != unexpected_.end()) {
    fill_locked(*op, *it);
    unexpected_.erase(it);
    return op;
  }
  if (auto error = lost_error_locked(*op)) {
    complete_locked(*op, error);
    return op;
  }
  posted_.push_back(op);
  return op;
}

std::shared_ptr<OpState> Mailbox::new_send(int dst, int tag) {
  auto op = std::make_shared<OpState>();
  op->peer = dst;
  op->tag = tag;
  return op;
}

void Mailbox::check_can_send(int dst) {
  OpState probe;
  probe.peer = dst;
  std::lock_guard lock(mutex_);
  if (auto error = lost_error_locked(probe)) std::rethrow_exception(error);
}

bool Mailbox::wait_until(const std::shared_ptr<OpState>& op, Clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  return cv_.wait_until(lock, deadline, [&] { return op->done; });
}

bool Mailbox::cancel_recv(const std::shared_ptr<OpState>& op) {
  std::lock_guard lock(mutex_);
  if (op->done) return false;
  posted_.remove(op);
  return true;
}

void Mailbox::deliver(Message&& message) {
  {
    std::lock_guard lock(mutex_);
    auto it = std::find_if(posted_.begin(), posted_.end(),
                           [&](const auto& op) { return fits(*op, message); });
    if (it == posted_.end()) {
      unexpected_.push_back(std::move(message));
      return;
    }
    fill_locked(**it, message);
    posted_.erase(it);
  }
  cv_.notify_all();
}

void Mailbox::complete(const std::shared_ptr<OpState>& op, std::exception_ptr error) {
  {
    std::lock_guard lock(mutex_);
    if (op->done) return;
    complete_locked(*op, std::move(error));
  }
  cv_.notify_all();
}

void Mailbox::peer_lost(int peer, const std::string& reason) {
  {
    std::lock_guard lock(mutex_);
    if (!lost_[peer].empty()) return;
    lost_[peer] = reason.empty() ? "connection closed" : reason;
    ++lost_count_;
    for (auto it = posted_.begin(); it != posted_.end();) {
      if (auto error = lost_error_locked(**it)) {
        complete_locked(**it, error);
        it = posted_.erase(it);
      } else {
        ++it;
      }
    }
  }
  cv_.notify_all();
}

void Mailbox::abort(const std::string& reason) {
  {
    std::lock_guard lock(mutex_);
    if (!aborted_.empty()) return;
    aborted_ = reason;
    for (auto& op : posted_)
      complete_locked(*op, lost_error_locked(*op));
    posted_.clear();
  }
  cv_.notify_all();
}

Status Mailbox::result(const OpState& op) {
  if (op.error) std::rethrow_exception(op.error);
  return op.status;
}

}  // namespace dsgd::sim
