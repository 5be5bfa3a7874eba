// SimControl: how a user steers a running simulated cluster — run, pause, slow motion, and
// step mode, in which messages are delivered one at a time. One API for the GUI and the
// terminal lessons. Create it, pass it in ClusterOptions, and call it from any thread
// while run_cluster() runs. Not thread-affine; every call is safe at any time.
#pragma once

#include <chrono>
#include <mutex>
#include <optional>
#include <vector>

#include "sim/mailbox.h"
#include "sim/net_clock.h"

namespace dsgd::sim {

class SimNode;
class Network;
struct LinkSpec;

// The message a step released.
struct StepInfo {
  int source = 0, dest = 0, tag = 0;
  uint64_t seq = 0;
  size_t count = 0;  // floats (0 when unknown)
  double model_s = 0;
  double net_s = 0;            // the network time it arrived at, where the step put the clock
  std::vector<float> preview;  // up to 4 first values
};

class SimControl {
 public:
  NetClock& clock() { return clock_; }
  void pause() { clock_.set_paused(true); }
  void resume() { clock_.set_paused(false); }
  void set_speed(double speed);  // UsageError unless 0.001 <= speed <= 1000
  // Step mode holds every message until step() lets it through, and holds the network clock:
  // each step moves it to the released message's arrival.
  void set_step_mode(bool on);
  bool step_mode() const;
  // Step mode: waits (up to timeout) until every running node is blocked and nothing is in
  // flight, then delivers the pending message with the lowest (model time, source, seq) and
  // returns it. The order is deterministic for a deterministic program. Waits for a run to
  // start if none has yet. nullopt when nothing is pending (the run ended, or is
  // deadlocked) or the timeout passed.
  std::optional<StepInfo> step(std::chrono::milliseconds timeout);
  // The same wait, then the message step() would deliver next, left pending (its net_s: the
  // arrival it would be delivered at).
  std::optional<StepInfo> peek(std::chrono::milliseconds timeout);

  // Replaces the default link of the running cluster's network from now on
  // (Network::set_default_link); false when no run is attached.
  bool set_link(const LinkSpec& link);

  // Used by run_cluster.
  void attach(std::vector<SimNode*> nodes, Network* network = nullptr);
  void detach();

 private:
  std::optional<StepInfo> next_message(std::chrono::milliseconds timeout, bool release);

  NetClock clock_;
  mutable std::mutex mutex_;
  std::vector<SimNode*> nodes_;
  Network* network_ = nullptr;
  bool step_mode_ = false;
  bool finished_ = false;  // a run was attached and has ended
};

// Whether the cluster is stuck: every node not done is blocked in a receive no held message
// can satisfy, and nothing is in flight. Returns the wait-for description, or nullopt.
std::optional<std::string> find_deadlock(const std::vector<SimNode*>& nodes);

}  // namespace dsgd::sim
