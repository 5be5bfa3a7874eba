#include "sim/mailbox.h"

#include <algorithm>
#include <cstring>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "core/errors.h"
#include "sim/wait_text.h"

namespace dsgd::sim {

Mailbox::Mailbox(int rank, int world, const NetClock& clock, MailboxDriver& driver)
    : rank_(rank), clock_(clock), driver_(driver), lost_(world) {}

void Mailbox::notify() {
  if (sleeping_.load()) driver_.wake();
}

size_t Message::count() const {
  return claimed ? claimed->buffer.size() : payload.size();
}

// A claimed message fits only its receive, and a claimed receive only its message.
bool Mailbox::fits(const OpState& op, const Message& m) const {
  if (m.claimed || op.claimed) return m.claimed == &op;
  return (op.peer == kAnySource || op.peer == m.source) && op.tag == m.tag;
}

bool Mailbox::visible_locked(const Message& m, double net_now) const {
  return mode_ == GateMode::step ? m.released : m.visible_net_s <= net_now;
}

void Mailbox::matched_locked(const OpState& op, const Message& m) {
  if (!m.sync) return;
  matches_.push_back({.source = m.source,
                      .tag = m.tag,
                      .seq = m.seq,
                      .model_s = std::max(m.model_s, op.posted_model_s)});
}

std::vector<Mailbox::Match> Mailbox::take_matches() {
  std::lock_guard lock(mutex_);
  return std::exchange(matches_, {});
}

void Mailbox::fill_locked(OpState& op, Message& m) {
  matched_locked(op, m);
  const size_t count = m.count();
  if (m.claimed) {  // the data is in op.buffer already
    op.claimed = false;
    op.status = {m.source, m.tag, count};
    op.model_s = m.model_s;
    op.visible_net_s = m.visible_net_s;
    complete_locked(op, nullptr);
    return;
  }
  if (count != op.buffer.size()) {
    complete_locked(op, std::make_exception_ptr(UsageError(fmt::format(
                            "rank {}: recv buffer holds {} floats but the message from rank {} "
                            "(tag {}) has {} floats; size the buffer to match the send",
                            rank_, op.buffer.size(), m.source, m.tag, count))));
    return;
  }
  if (count) std::memcpy(op.buffer.data(), m.payload.data(), count * sizeof(float));
  give_buffer_locked(std::move(m.payload));
  op.status = {m.source, m.tag, count};
  op.model_s = m.model_s;
  op.visible_net_s = m.visible_net_s;
  complete_locked(op, nullptr);
}

void Mailbox::complete_locked(OpState& op, std::exception_ptr error) {
  if (op.claimed) end_claim_locked(op, false);
  op.done = true;
  op.error = std::move(error);
}

void Mailbox::end_claim_locked(OpState& op, bool keep) {
  op.claimed = false;
  auto m = std::find_if(arrived_.begin(), arrived_.end(),
                        [&](const Message& x) { return x.claimed == &op; });
  if (m == arrived_.end()) return;
  if (keep) {
    m->payload.assign(op.buffer.begin(), op.buffer.end());
    m->claimed = nullptr;
  } else {
    arrived_.erase(m);
  }
}

std::shared_ptr<OpState> Mailbox::claim(int source, int tag, size_t count) {
  std::lock_guard lock(mutex_);
  if (mode_ != GateMode::run) return nullptr;
  Message probe;
  probe.source = source;
  probe.tag = tag;
  for (const auto& op : posted_) {
    if (!fits(*op, probe)) continue;
    // The first posted receive the frame fits; it must name the source, have the size and
    // have nothing held that it would match first.
    if (op->peer != source || op->buffer.size() != count) return nullptr;
    for (const Message& m : arrived_)
      if (fits(*op, m)) return nullptr;
    op->claimed = true;
    return op;
  }
  return nullptr;
}

bool Mailbox::claim_valid(const OpState& op) {
  std::lock_guard lock(mutex_);
  return op.claimed && !op.done;
}

void Mailbox::deliver_claimed(Message&& message, const std::shared_ptr<OpState>& op) {
  {
    std::lock_guard lock(mutex_);
    if (!op->claimed || op->done) return;  // failed meanwhile: the message goes with it
    message.claimed = op.get();
    arrived_.push_back(std::move(message));
    progress_locked();
  }
  notify();
}

void Mailbox::progress_locked() {
  if (posted_.empty() || arrived_.empty()) return;
  const double now = mode_ == GateMode::run ? clock_.now_s() : 0.0;
  while (true) {
    auto best_m = arrived_.end();
    auto best_op = posted_.end();
    for (auto m = arrived_.begin(); m != arrived_.end(); ++m) {
      if (!visible_locked(*m, now)) continue;
      if (best_m != arrived_.end() && m->visible_net_s >= best_m->visible_net_s) continue;
      auto op =
          std::find_if(posted_.begin(), posted_.end(), [&](const auto& o) { return fits(*o, *m); });
      if (op == posted_.end()) continue;
      best_m = m;
      best_op = op;
    }
    if (best_m == arrived_.end()) return;
    fill_locked(**best_op, *best_m);
    arrived_.erase(best_m);
    posted_.erase(best_op);
  }
}

std::optional<double> Mailbox::next_visible_locked() const {
  std::optional<double> next;
  for (const Message& m : arrived_) {
    if (next && m.visible_net_s >= *next) continue;
    for (const auto& op : posted_)
      if (fits(*op, m)) {
        next = m.visible_net_s;
        break;
      }
  }
  return next;
}

std::exception_ptr Mailbox::lost_error_locked(const OpState& op) const {
  if (!aborted_.empty()) return std::make_exception_ptr(CommError(aborted_, op.peer));
  if (op.peer != kAnySource && !lost_[op.peer].empty())
    return std::make_exception_ptr(
        CommError(lost_peer_text(rank_, op.peer, op.is_recv, op.tag, lost_[op.peer]), op.peer));
  // A receive from any source fails only when no other rank is left to send.
  if (op.peer == kAnySource && lost_.size() > 1 &&
      lost_count_ >= static_cast<int>(lost_.size()) - 1)
    return std::make_exception_ptr(
        CommError(fmt::format("rank {}: every other rank is lost; nobody can send", rank_), -1));
  return nullptr;
}

std::shared_ptr<OpState> Mailbox::post_recv(std::span<float> buffer, int source, int tag,
                                            double model_s) {
  auto op = std::make_shared<OpState>();
  op->is_recv = true;
  op->posted_model_s = model_s;
  op->peer = source;
  op->tag = tag;
  op->buffer = buffer;
  std::lock_guard lock(mutex_);
  posted_.push_back(op);
  progress_locked();
  if (op->done) return op;
  // Messages that arrived before a peer was lost are still valid: only fail when none fits.
  const bool held =
      std::any_of(arrived_.begin(), arrived_.end(), [&](const Message& m) { return fits(*op, m); });
  if (!held)
    if (auto error = lost_error_locked(*op)) {
      posted_.remove(op);
      complete_locked(*op, error);
    }
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
  using namespace std::chrono_literals;
  std::unique_lock lock(mutex_);
  waiting_on_ = op.get();
  while (true) {
    sleeping_.store(true);
    progress_locked();
    if (op->done) break;
    const auto now = Clock::now();
    if (now >= deadline) {
      sleeping_.store(false);
      waiting_on_ = nullptr;
      return false;
    }
    Clock::time_point wake = deadline;
    if (mode_ == GateMode::run) {
      if (auto t = next_visible_locked()) {
        if (clock_.paused()) {
          wake = std::min(wake, now + 20ms);  // re-check: the clock may resume
        } else {
          const auto at = clock_.real_time_of(*t);
          // Sleep to just before the arrival, then spin to it (pumping, and yielding the
          // core): a sleeping thread wakes tens of microseconds late, and that error would
          // add up hop by hop.
          wake = at - now < 250us ? now : std::min(wake, at - 200us);
          wake = std::min(wake, now + 50ms);  // speed changes are picked up within 50 ms
        }
      }
    }
    op->blocked = true;
    lock.unlock();
    driver_.pump(wake);
    if (wake == now) std::this_thread::yield();
    lock.lock();
  }
  sleeping_.store(false);
  waiting_on_ = nullptr;
  return true;
}

bool Mailbox::poll(const std::shared_ptr<OpState>& op) {
  std::lock_guard lock(mutex_);
  progress_locked();
  return op->done;
}

bool Mailbox::cancel_recv(const std::shared_ptr<OpState>& op) {
  std::lock_guard lock(mutex_);
  if (op->done) return false;
  if (op->claimed) end_claim_locked(*op, true);  // its data, if here, stays for a later recv
  posted_.remove(op);
  return true;
}

void Mailbox::deliver(Message&& message) {
  {
    std::lock_guard lock(mutex_);
    arrived_.push_back(std::move(message));
    progress_locked();
  }
  notify();
}

void Mailbox::complete(const std::shared_ptr<OpState>& op, std::exception_ptr error) {
  {
    std::lock_guard lock(mutex_);
    if (op->done) return;
    complete_locked(*op, std::move(error));
  }
  notify();
}

void Mailbox::peer_lost(int peer, const std::string& reason) {
  {
    std::lock_guard lock(mutex_);
    if (!lost_[peer].empty()) return;
    lost_[peer] = reason.empty() ? "connection closed" : reason;
    ++lost_count_;
    for (auto it = posted_.begin(); it != posted_.end();) {
      const OpState& op = **it;
      const bool held = std::any_of(arrived_.begin(), arrived_.end(),
                                    [&](const Message& m) { return fits(op, m); });
      auto error = held ? nullptr : lost_error_locked(op);
      if (error) {
        complete_locked(**it, error);
        it = posted_.erase(it);
      } else {
        ++it;
      }
    }
  }
  notify();
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
  notify();
}

std::string Mailbox::failure() const {
  std::lock_guard lock(mutex_);
  if (!aborted_.empty()) return aborted_;
  for (size_t p = 0; p < lost_.size(); ++p)
    if (!lost_[p].empty()) return fmt::format("rank {}: {}", p, lost_[p]);
  return {};
}

void Mailbox::set_mode(GateMode mode) {
  {
    std::lock_guard lock(mutex_);
    mode_ = mode;
    progress_locked();
  }
  notify();
}

void Mailbox::set_done() {
  std::lock_guard lock(mutex_);
  done_ = true;
}

void Mailbox::wake() {
  driver_.wake();
}

Mailbox::Snapshot Mailbox::snapshot() {
  std::lock_guard lock(mutex_);
  Snapshot s;
  s.done = done_;
  s.matches_pending = !matches_.empty();
  if (waiting_on_ && !waiting_on_->done) {
    s.waiting = true;
    s.waiting_recv = waiting_on_->is_recv;
    s.peer = waiting_on_->peer;
    s.tag = waiting_on_->tag;
    s.send_count = waiting_on_->is_recv ? 0 : waiting_on_->status.count;
    // A send waits only for a wire or, above the eager limit, for a receive elsewhere.
    s.satisfiable = waiting_on_->is_recv &&
                    std::any_of(arrived_.begin(), arrived_.end(),
                                [&](const Message& m) { return fits(*waiting_on_, m); });
  }
  for (const Message& m : arrived_) {
    if (m.released) continue;
    if (!s.next || std::tie(m.model_s, m.source, m.seq) <
                       std::tie(s.next->model_s, s.next->source, s.next->seq)) {
      Message copy;
      copy.source = m.source;
      copy.dest = m.dest;
      copy.tag = m.tag;
      copy.seq = m.seq;
      copy.model_s = m.model_s;
      copy.visible_net_s = m.visible_net_s;
      const std::span<const float> data =
          m.claimed ? std::span<const float>(m.claimed->buffer) : std::span<const float>(m.payload);
      copy.payload.assign(data.begin(), data.begin() + std::min<size_t>(4, data.size()));
      s.next = std::move(copy);
      s.next_count = data.size();
    }
  }
  return s;
}

bool Mailbox::release(int source, uint64_t seq) {
  {
    std::lock_guard lock(mutex_);
    auto it = std::find_if(arrived_.begin(), arrived_.end(), [&](const Message& m) {
      return m.source == source && m.seq == seq && !m.released;
    });
    if (it == arrived_.end()) return false;
    it->released = true;
    progress_locked();
  }
  notify();
  return true;
}

void Mailbox::give_buffer_locked(Payload&& buffer) {
  constexpr size_t kSpareBuffers = 4;
  if (buffer.capacity() >= 1024 && spare_.size() < kSpareBuffers)
    spare_.push_back(std::move(buffer));
}

void Mailbox::give_buffer(Payload&& buffer) {
  std::lock_guard lock(mutex_);
  give_buffer_locked(std::move(buffer));
}

Payload Mailbox::take_buffer(size_t count) {
  std::lock_guard lock(mutex_);
  for (auto it = spare_.begin(); it != spare_.end(); ++it)
    if (it->capacity() >= count) {
      Payload p = std::move(*it);
      spare_.erase(it);
      p.resize(count);
      return p;
    }
  Payload p;
  p.resize(count);
  return p;
}

Status Mailbox::result(const OpState& op) {
  if (op.error) std::rethrow_exception(op.error);
  return op.status;
}

}  // namespace dsgd::sim
