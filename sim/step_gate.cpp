#include "sim/step_gate.h"

#include <utility>

namespace dsgd::sim {

void StepGate::hold(StepInfo m) {
  std::unique_lock lock(mutex_);
  held_ = std::move(m);
  released_ = false;
  changed_.notify_all();
  changed_.wait(lock, [this] { return released_; });
  held_.reset();
}

bool StepGate::await_held(std::unique_lock<std::mutex>& lock, std::chrono::milliseconds timeout) {
  return changed_.wait_for(lock, timeout, [this] { return held_ && !released_; });
}

std::optional<StepInfo> StepGate::step(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  if (!await_held(lock, timeout)) return std::nullopt;
  released_ = true;
  changed_.notify_all();
  return *held_;
}

std::optional<StepInfo> StepGate::peek(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  if (!await_held(lock, timeout)) return std::nullopt;
  return *held_;
}

}  // namespace dsgd::sim
