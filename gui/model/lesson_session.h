// LessonSession: one lesson (lessons/NN-name, the same program `dsgd lesson N` runs) on
// simulated nodes inside the window. The lesson runs on a background thread with a
// SimControl in step mode, so "Step message" lets one message through and Play runs on; the
// GUI copies the run's events into snapshots for the topology view and reads the lesson's
// text and output as a transcript, section by section (lessons::StepTranscript, free pace).
// Not a view and not a second copy of the lessons: it knows nothing of ImGui, and runs the
// lesson as a lessons::LiveLesson like the terminal does.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gui/model/commands.h"
#include "gui/model/session.h"
#include "gui/model/snapshot.h"
#include "lessons/lesson.h"
#include "lessons/readme.h"
#include "lessons/step_transcript.h"

namespace dsgd::gui {

// Every lesson of the catalog with its title in both languages (a missing README gives
// "Lesson N"), for the lesson picker.
std::vector<LessonEntry> lesson_entries();
// Every Chinese character the lesson panel may show (the lessons' zh-CN texts and the
// panel's own labels), for the font atlas.
std::string lesson_font_text();

// The lesson panel's view of a lesson's transcript so far (also of one whose ranks are a
// classroom's laptops, class_lesson.h); running, pending steps and error are the caller's.
LessonView lesson_view(const lessons::LessonInfo& info, lessons::Lang lang,
                       const lessons::LessonText& text, int world,
                       const lessons::StepTranscript& transcript);

class LessonSession {
 public:
  LessonSession();
  ~LessonSession();
  LessonSession(const LessonSession&) = delete;
  LessonSession& operator=(const LessonSession&) = delete;

  // Stops any lesson running and starts lesson `number` in `lang` on its default number of
  // nodes, in step mode. UsageError for an unknown lesson, DataError for missing text.
  void start(int number, lessons::Lang lang, double speed = 1.0);
  void stop();
  // play, pause, set_speed, set_step_mode, step_message; false for other commands.
  bool apply(const Command& command);
  // Once per frame: delivers the messages the user stepped, without blocking the frame for
  // long. A step goes on until a message the lesson shows has been delivered (the silent
  // ones, such as a training step's, pass on the way).
  void poll();

  bool active() const { return run_ != nullptr; }
  bool running() const;
  int pending_steps() const { return pending_message_steps_; }
  Snapshot snapshot(const ViewSettings& view) const;
  // The panel's part of the snapshot (also in snapshot()).
  LessonView view() const;

 private:
  struct Run;
  std::unique_ptr<Run> run_;
  int pending_message_steps_ = 0;
};

}  // namespace dsgd::gui
