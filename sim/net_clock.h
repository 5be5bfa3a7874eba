// NetClock: the simulated network's sense of time. It runs with the steady clock, scaled by
// a speed factor (0.1 = ten times slower, for a classroom), and stops while paused, so
// paused time does not count as network time. In step mode it is held: it stands still
// and moves only when the step gate releases a message, to the time that message arrives,
// so a stepped run shows network time, not how long the teacher took to click.
// Shared by every node of a cluster.
#pragma once

#include <algorithm>
#include <chrono>
#include <mutex>

namespace dsgd::sim {

class NetClock {
 public:
  using Clock = std::chrono::steady_clock;

  NetClock() : real_anchor_(Clock::now()) {}
  // Network time 0 at `epoch`. Processes of one host that share an epoch share the clock
  // (steady_clock is CLOCK_MONOTONIC, one per machine): how `dsgd node` runs agree on time.
  explicit NetClock(Clock::time_point epoch) : real_anchor_(epoch) {}

  // Seconds of network time since the clock was made.
  double now_s() const {
    std::lock_guard lock(mutex_);
    return now_locked(Clock::now());
  }

  // The real time at which network time reaches t, or max() while paused or held.
  Clock::time_point real_time_of(double t) const {
    std::lock_guard lock(mutex_);
    if (stopped_locked()) return Clock::time_point::max();
    const double ahead_s = std::max(0.0, (t - net_anchor_s_) / speed_);
    return real_anchor_ +
           std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(ahead_s));
  }

  void set_paused(bool paused) {
    std::lock_guard lock(mutex_);
    if (paused == paused_) return;
    reanchor_locked();
    paused_ = paused;
  }
  // The user's pause (not the step mode's hold).
  bool paused() const {
    std::lock_guard lock(mutex_);
    return paused_;
  }
  // Step mode: held, the clock stands still until advance_to() moves it.
  void set_held(bool held) {
    std::lock_guard lock(mutex_);
    if (held == held_) return;
    reanchor_locked();
    held_ = held;
  }
  // Moves network time forward to t (never back): a released message's arrival.
  void advance_to(double t) {
    std::lock_guard lock(mutex_);
    reanchor_locked();
    net_anchor_s_ = std::max(net_anchor_s_, t);
  }
  // speed > 0: 1 = real time, 0.1 = slow motion, 2 = fast.
  void set_speed(double speed) {
    std::lock_guard lock(mutex_);
    reanchor_locked();
    speed_ = speed;
  }
  double speed() const {
    std::lock_guard lock(mutex_);
    return speed_;
  }

 private:
  bool stopped_locked() const { return paused_ || held_; }
  double now_locked(Clock::time_point real) const {
    if (stopped_locked()) return net_anchor_s_;
    return net_anchor_s_ + std::chrono::duration<double>(real - real_anchor_).count() * speed_;
  }
  void reanchor_locked() {
    const auto real = Clock::now();
    net_anchor_s_ = now_locked(real);
    real_anchor_ = real;
  }

  mutable std::mutex mutex_;
  Clock::time_point real_anchor_;
  double net_anchor_s_ = 0;
  double speed_ = 1.0;
  bool paused_ = false;
  bool held_ = false;
};

}  // namespace dsgd::sim
