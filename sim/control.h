// SimControl: how a user steers a running simulated cluster — run, pause, slow motion, and
// step mode, in which messages are delivered one at a time. One API for the GUI and the
// terminal lessons. Create it, pass it in ClusterOptions, and call it from any thread
// while run_cluster() runs. Not thread-affine; every call is safe at any time.
#pragma once

#include <chrono>
#include <mutex>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/mailbox.h"
#include "sim/net_clock.h"
#include "sim/step_info.h"

namespace dsgd::sim {

class SimNode;
class Network;
struct LinkSpec;

// One process's share of a stepped run whose other nodes run elsewhere (a classroom's
// laptops, each a process): what a stepper that sees every process's share needs to choose
// the run's next message as step() does, and to know its last release took effect.
struct LocalStepState {
  bool attached = false;            // a node of this process runs (false before and after)
  bool busy = false;                // a node not blocked, or a match not yet told to its sender
  uint64_t sent = 0, received = 0;  // frames: messages and the answers to large sends
  uint64_t released = 0;            // release() calls so far
  std::optional<StepInfo> next;     // the earliest message held here (its net_s: arrival)
};

class SimControl : public Stepper {
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
  std::optional<StepInfo> step(std::chrono::milliseconds timeout) override;
  // The same wait, then the message step() would deliver next, left pending (its net_s: the
  // arrival it would be delivered at).
  std::optional<StepInfo> peek(std::chrono::milliseconds timeout) override;

  // Step mode, for a stepper outside this process: this process's share of the run (counts
  // kept after the run detaches), and the release of the message it chose, at its arrival
  // time `net_s` on this process's clock. False when no node here holds that message.
  LocalStepState local_state();
  bool release(int source, uint64_t seq, double net_s);

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
  bool finished_ = false;                       // a run was attached and has ended
  std::pair<uint64_t, uint64_t> last_traffic_;  // frames sent and received, as last seen
  uint64_t released_ = 0;                       // release() calls
};

// Whether the cluster is stuck: every node not done is blocked in a receive no held message
// can satisfy, and nothing is in flight. Returns the wait-for description, or nullopt.
std::optional<std::string> find_deadlock(const std::vector<SimNode*>& nodes);

}  // namespace dsgd::sim
