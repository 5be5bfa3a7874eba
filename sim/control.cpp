#include "sim/control.h"

#include <thread>

#include <fmt/format.h>

#include "core/errors.h"
#include "sim/network.h"
#include "sim/node.h"
#include "sim/wait_text.h"

namespace dsgd::sim {
namespace {

// Sums of frames sent and received over the nodes: messages and the answers to sends above
// the eager limit (`matched`).
std::pair<uint64_t, uint64_t> traffic(const std::vector<SimNode*>& nodes) {
  uint64_t sent = 0, received = 0;
  for (SimNode* n : nodes)
    sent += n->messages_sent() + n->matches_sent();
  for (SimNode* n : nodes)
    received += n->messages_received() + n->matches_received();
  return {sent, received};
}

// "rank 0 waits in recv from rank 1, tag 0", or in a send above the eager limit, which
// nothing but the matching receive completes.
std::string blocked_text(const SimNode& n, const Mailbox::Snapshot& s) {
  if (s.waiting_recv) return blocked_recv_text(n.rank(), s.peer, s.tag);
  return blocked_send_text(n.rank(), s.peer, s.tag, s.send_count * sizeof(float), n.eager_bytes());
}

StepInfo step_info(const Message& m, size_t count) {
  return {.source = m.source,
          .dest = m.dest,
          .tag = m.tag,
          .seq = m.seq,
          .count = count,
          .model_s = m.model_s,
          .net_s = m.visible_net_s,
          .preview = {m.payload.begin(), m.payload.end()}};
}

}  // namespace

void SimControl::set_speed(double speed) {
  if (!(speed >= 0.001 && speed <= 1000))
    throw UsageError(fmt::format("speed {}: use a factor from 0.001 to 1000", speed));
  clock_.set_speed(speed);
  std::lock_guard lock(mutex_);
  for (SimNode* n : nodes_)
    n->mailbox().wake();
}

void SimControl::set_step_mode(bool on) {
  clock_.set_held(on);
  std::lock_guard lock(mutex_);
  step_mode_ = on;
  for (SimNode* n : nodes_)
    n->mailbox().set_mode(on ? GateMode::step : GateMode::run);
}

bool SimControl::step_mode() const {
  std::lock_guard lock(mutex_);
  return step_mode_;
}

bool SimControl::set_link(const LinkSpec& link) {
  std::lock_guard lock(mutex_);
  if (!network_) return false;
  network_->set_default_link(link);
  return true;
}

void SimControl::attach(std::vector<SimNode*> nodes, Network* network) {
  std::lock_guard lock(mutex_);
  nodes_ = std::move(nodes);
  network_ = network;
  finished_ = false;
  for (SimNode* n : nodes_)
    n->mailbox().set_mode(step_mode_ ? GateMode::step : GateMode::run);
}

void SimControl::detach() {
  std::lock_guard lock(mutex_);
  if (!nodes_.empty()) last_traffic_ = traffic(nodes_);
  nodes_.clear();
  network_ = nullptr;
  finished_ = true;
}

LocalStepState SimControl::local_state() {
  std::lock_guard lock(mutex_);
  LocalStepState out{.attached = !nodes_.empty(), .released = released_};
  const auto before = nodes_.empty() ? last_traffic_ : traffic(nodes_);
  std::optional<Message> best;
  for (SimNode* n : nodes_) {
    Mailbox::Snapshot s = n->mailbox().snapshot();
    if ((!s.done && !s.waiting) || s.matches_pending) out.busy = true;
    if (s.next && (!best || steps_before(*s.next, *best))) {
      best = std::move(s.next);
      out.next = step_info(*best, s.next_count);
    }
  }
  if (!nodes_.empty()) {
    last_traffic_ = traffic(nodes_);
    if (last_traffic_ != before) out.busy = true;  // a frame came or went meanwhile
  }
  std::tie(out.sent, out.received) = before;
  return out;
}

bool SimControl::release(int source, uint64_t seq, double net_s) {
  std::lock_guard lock(mutex_);
  ++released_;
  clock_.advance_to(net_s);
  for (SimNode* n : nodes_)
    if (n->mailbox().release(source, seq)) return true;
  return false;
}

std::optional<StepInfo> SimControl::step(std::chrono::milliseconds timeout) {
  return next_message(timeout, true);
}

std::optional<StepInfo> SimControl::peek(std::chrono::milliseconds timeout) {
  return next_message(timeout, false);
}

std::optional<StepInfo> SimControl::next_message(std::chrono::milliseconds timeout, bool release) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    {
      std::lock_guard lock(mutex_);
      if (nodes_.empty() && finished_) return std::nullopt;
      // Quiescent: nothing in flight and every node not done is blocked. Only then is the
      // set of pending messages complete, so the choice below does not depend on timing.
      const auto before = traffic(nodes_);
      bool quiet = before.first == before.second;
      std::optional<Message> best;
      size_t best_count = 0;
      SimNode* owner = nullptr;
      bool any_running = false;
      for (SimNode* n : nodes_) {
        Mailbox::Snapshot s = n->mailbox().snapshot();
        // A match not yet told to its sender is a frame about to be in flight.
        if ((!s.done && !s.waiting) || s.matches_pending) any_running = true;
        if (s.next && (!best || steps_before(*s.next, *best))) {
          best = std::move(s.next);
          best_count = s.next_count;
          owner = n;
        }
      }
      const auto after = traffic(nodes_);
      quiet = quiet && after == before && !any_running && !nodes_.empty();
      if (quiet) {
        if (!best) return std::nullopt;
        StepInfo info = step_info(*best, best_count);
        if (!release) return info;
        // Before the release: the receive's events are stamped with the arrival's time.
        clock_.advance_to(best->visible_net_s);
        info.net_s = clock_.now_s();
        if (owner->mailbox().release(best->source, best->seq)) return info;
      }
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return std::nullopt;
}

std::optional<std::string> find_deadlock(const std::vector<SimNode*>& nodes) {
  const auto before = traffic(nodes);
  if (before.first != before.second) return std::nullopt;
  std::string report;
  int blocked = 0;
  for (SimNode* n : nodes) {
    Mailbox::Snapshot s = n->mailbox().snapshot();
    if (s.done) continue;
    // With nothing in flight, a send still waiting is one above the eager limit that no
    // receive has matched.
    if (!s.waiting || s.satisfiable || s.matches_pending) return std::nullopt;
    ++blocked;
    if (!report.empty()) report += "; ";
    report += blocked_text(*n, s);
  }
  if (blocked == 0 || traffic(nodes) != before) return std::nullopt;
  return deadlock_text(report);
}

}  // namespace dsgd::sim
