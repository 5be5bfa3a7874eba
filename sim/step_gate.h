// StepGate: step mode for a simulation that runs on one thread in virtual time (SimGrid's,
// sim/simgrid/sg_fabric.h). When every rank waits, the simulation hands the message it would
// deliver next to hold(), which blocks its thread, and so the whole simulated world, until
// the steering thread's step() lets that message through; peek() shows it and lets it wait.
// Virtual time stands still meanwhile, so no deadline passes while a student reads.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>

#include "sim/step_info.h"

namespace dsgd::sim {

class StepGate : public Stepper {
 public:
  // The simulation's thread: waits until step() has let `m` through.
  void hold(StepInfo m);

  std::optional<StepInfo> step(std::chrono::milliseconds timeout) override;
  std::optional<StepInfo> peek(std::chrono::milliseconds timeout) override;

 private:
  // Waits for a message held and not yet let through; false at the timeout.
  bool await_held(std::unique_lock<std::mutex>& lock, std::chrono::milliseconds timeout);

  std::mutex mutex_;
  std::condition_variable changed_;
  std::optional<StepInfo> held_;
  bool released_ = false;
};

}  // namespace dsgd::sim
