// ClassLesson: the teacher's window's side of a lesson whose ranks are a classroom's laptops
// (dsgd-gui --classroom, classroom.h). Each laptop runs its rank of the lesson as `dsgd
// lesson` would and tells the window every item its rank records and, stepped, where it
// stands (core/io/classroom_wire.h); this merges the items into the lesson's transcript for
// the lesson panel (lessons::StepTranscript, free pace, as LessonSession shows a local one),
// and steps the run from the window: once every laptop's rank is blocked and no message is
// in flight, it lets through the earliest message held on any laptop, in the order
// SimControl::step() uses on one machine, so the transcript is the lesson's golden one.
// Not a run: the laptops run the lesson; this only hears and steers it.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/io/classroom_wire.h"
#include "gui/model/classroom.h"
#include "gui/model/commands.h"
#include "gui/model/snapshot.h"
#include "lessons/lesson.h"
#include "lessons/readme.h"
#include "lessons/step_transcript.h"
#include "lessons/transcript.h"

namespace dsgd::gui {

class ClassLesson {
 public:
  // Run `run` of the classroom: lesson `info` in `lang` on `world` laptops, stepped from here
  // when `step`. Takes the classroom's run lines until destroyed. DataError for missing text.
  ClassLesson(Classroom& room, const lessons::LessonInfo& info, lessons::Lang lang, int world,
              int run, bool step);
  ~ClassLesson();
  ClassLesson(const ClassLesson&) = delete;
  ClassLesson& operator=(const ClassLesson&) = delete;

  // step_message, play, pause (the laptops hold their next message) and set_step_mode; false
  // for other commands.
  bool apply(const Command& command);
  // Once per frame: lets the messages the teacher stepped through, a shown one per step (the
  // silent ones, a training step's, pass on the way), without blocking the frame.
  void poll();
  // Every laptop's rank has run and ended.
  bool finished() const;
  bool step_mode() const { return step_; }
  int pending_steps() const { return pending_steps_; }
  int run() const { return run_; }
  LessonView view() const;
  // Once finished(): the lesson's transcript as `dsgd lesson N` prints it
  // (lessons::finished_transcript). Once: a second call has no merged part.
  std::string take_transcript();

 private:
  // The message the next step lets through, once every rank is blocked and nothing is in
  // flight (and its release sent to its laptop), with whether the lesson shows it; nullopt
  // while not so, or when nothing is held.
  struct Delivery {
    ClassroomPending message;
    bool shown = true;
  };
  std::optional<Delivery> step();

  struct Rank {
    std::optional<ClassroomRankState> state;  // the latest
    bool started = false;                     // seen attached
    uint64_t releases = 0;                    // sent to it
  };
  void take(const ClassroomMessage& m);  // the classroom's thread
  bool quiet_locked() const;
  void set_pace(bool step);

  Classroom& room_;
  lessons::LessonInfo info_;
  lessons::Lang lang_;
  lessons::LessonText text_;
  int world_;
  int run_;
  bool step_;
  int pending_steps_ = 0;
  mutable std::mutex mutex_;  // ranks_; never held while calling the classroom
  std::vector<Rank> ranks_;
  std::unique_ptr<lessons::Recorder> recorder_;
  std::unique_ptr<lessons::StepTranscript> transcript_;
};

}  // namespace dsgd::gui
