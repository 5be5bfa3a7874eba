// StepInfo: a message that step mode holds, as the one who steps sees it, and the order
// step mode lets held messages through in; Stepper: step mode as a lesson's steering thread
// drives it, whichever runs the messages (simulated nodes: SimControl, sim/control.h; a
// simulation on one thread, SimGrid's: StepGate, sim/step_gate.h).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

namespace dsgd::sim {

// The message a step released.
struct StepInfo {
  int source = 0, dest = 0, tag = 0;
  uint64_t seq = 0;
  size_t count = 0;  // floats (0 when unknown)
  double model_s = 0;
  double net_s = 0;            // the network time it arrived at, where the step put the clock
  std::vector<float> preview;  // up to 4 first values
};

// The order step mode delivers held messages in: (model time, source, dest, seq), deterministic
// for a deterministic program. For a Message, a StepInfo, or a classroom's ClassroomPending
// (a stepper whose nodes are other processes must choose as step() does).
template <typename HeldMessage>
bool steps_before(const HeldMessage& a, const HeldMessage& b) {
  return std::tie(a.model_s, a.source, a.dest, a.seq) <
         std::tie(b.model_s, b.source, b.dest, b.seq);
}

class Stepper {
 public:
  virtual ~Stepper() = default;
  // Once every rank waits: lets the next held message through and returns it; nullopt when
  // nothing is held within `timeout` (the run ended, is deadlocked, or is still busy).
  virtual std::optional<StepInfo> step(std::chrono::milliseconds timeout) = 0;
  // The same wait, then the message step() would let through next, still held.
  virtual std::optional<StepInfo> peek(std::chrono::milliseconds timeout) = 0;
};

}  // namespace dsgd::sim
