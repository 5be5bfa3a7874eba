#include "lessons/step_plan.h"

#include <thread>
#include <utility>

namespace dsgd::lessons {

LiveLesson::Options StepPlan::unseen(LiveLesson::Options options) {
  options.cluster.control = nullptr;
  options.cluster.events = nullptr;
  options.pace = std::nullopt;
  options.settings.data = nullptr;
  options.settings.sync_sections = false;
  return options;
}

StepPlan::StepPlan(LiveLesson::Options options) : lesson_(unseen(std::move(options))) {
  lesson_.start();
}

std::optional<Recorder::Pauses> StepPlan::pauses(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!lesson_.finished() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  if (!lesson_.finished() || lesson_.failure()) return std::nullopt;
  return lesson_.recorder().pauses(lesson_.world());
}

}  // namespace dsgd::lessons
