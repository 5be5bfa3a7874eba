// StepPlan: how many pauses a `dsgd lesson N --step` run will make (parts, messages shown,
// demo calls), counted by a run of the same lesson ahead, unstepped and unseen, in a thread
// of its own while the student reads the first page, so that each prompt can say where the
// student is ("message 3 of 4"). What a lesson shows depends only on what each rank does
// (transcript.h), not on its pace, so the run ahead pauses where the stepped one will.
#pragma once

#include <chrono>
#include <optional>

#include "lessons/live_lesson.h"
#include "lessons/transcript.h"

namespace dsgd::lessons {

class StepPlan {
 public:
  // Starts the run ahead: `options` as for the stepped run, but its own control, no event
  // sink and no live transcript.
  explicit StepPlan(LiveLesson::Options options);

  // The counts, once the run ahead has finished (waiting at most `timeout`); nullopt when
  // it failed or is still running.
  std::optional<Recorder::Pauses> pauses(std::chrono::milliseconds timeout);

 private:
  static LiveLesson::Options unseen(LiveLesson::Options options);

  LiveLesson lesson_;  // its destructor waits for the run ahead
};

}  // namespace dsgd::lessons
