// GuiApp: what the window shows and where it comes from — a live SimSession, a lesson
// (LessonSession) or a replayed trace — plus the view settings and the replay's time cursor. Each
// frame the main loop asks it for a Snapshot, draws, and hands it the frame's Commands. No ImGui,
// no OpenGL: tests drive it as the window does.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "gui/model/class_lesson.h"
#include "gui/model/classroom.h"
#include "gui/model/commands.h"
#include "gui/model/lesson_session.h"
#include "gui/model/session.h"
#include "gui/model/settings.h"
#include "gui/model/snapshot.h"
#include "gui/model/trace_replay.h"
#include "gui/model/watch.h"

namespace dsgd::gui {

class GuiApp {
 public:
  GuiApp();
  ~GuiApp();
  // Starts a live run. Errors (bad settings) end up in the snapshot's error.
  void start_live(const SimSettings& settings);
  // Loads a trace to replay (and optionally a metrics file for its curves). A malformed
  // file leaves the app showing the error instead.
  void open_replay(const std::string& trace_path, const std::string& metrics_path = "");
  // The same with files already loaded (main loads the command line's before any window
  // opens, so that a bad file is a one-line error and exit code 2).
  void open_replay(Replay replay, std::optional<Curve> curve);
  // Opens lesson `number` (as `dsgd lesson N` runs it) in step mode. Errors end up in the
  // snapshot's error.
  void start_lesson(int number, bool chinese, double speed = 1.0);
  // Shows the runs that stream their events to `endpoint` ("PORT" or "HOST:PORT", watch.h),
  // as they happen. Errors (the port taken) end up in the snapshot's error.
  void open_watch(const std::string& endpoint, const std::string& token = "");
  void open_watch(std::unique_ptr<Watch> watch);  // one already listening
  const Watch* watch() const { return watch_.get(); }
  // Hosts a class (classroom.h): students' laptops join it, and the start_class_run command
  // starts a run of the controls' settings on every student waiting (or a lesson, stepped
  // from here: class_lesson.h), which the window then watches; add_to_class_run adds those
  // waiting to an elastic training run under way (app_classroom.cpp).
  void open_classroom(std::unique_ptr<Classroom> classroom);
  const Classroom* classroom() const { return classroom_.get(); }
  // The classroom's lesson run on the laptops, while it is the latest run (class_lesson.h).
  ClassLesson* class_lesson() { return class_lesson_.get(); }
  // The runs of `dsgd compare --json` (compare_curves.h), overlaid in every mode's
  // convergence view, first, under the runs' own curves.
  void set_compared(std::vector<Curve> curves) { compared_ = std::move(curves); }

  // Applies every command (simulation ones to the session, the others here).
  void apply(Commands& commands);
  // Advances what moves by itself (a playing replay's cursor) by `dt_s` of real time.
  void tick(double dt_s);
  Snapshot snapshot() const;

  ViewSettings& view() { return view_; }
  bool replaying() const { return replay_.has_value(); }
  SimSession* session() { return session_.get(); }
  LessonSession* lesson() { return lesson_ && lesson_->active() ? lesson_.get() : nullptr; }
  // Replay cursor in [begin_s, end_s] of the replay's time base.
  void seek(double t_s);
  void seek_fraction(double f);  // 0 = start, 1 = end
  double cursor_s() const { return cursor_s_; }

 private:
  std::unique_ptr<SimSession> session_;
  std::unique_ptr<LessonSession> lesson_;
  std::vector<LessonEntry> lessons_;  // the catalog, for the picker
  // A new run, lesson or replay: the timeline's zoom and scroll and the selected message
  // belonged to the old one's times and messages.
  void forget_view_of_last_run();
  // Reads the replay's run description into recorded_ (and the controls' draft).
  void show_recorded_run();
  Snapshot replay_snapshot() const;
  Snapshot watch_snapshot() const;
  void show_watched_run();
  // The first watched run's description and its links, or nullptr while none has come.
  struct WatchedRun {
    SimSettings settings;
    std::vector<LinkView> links;
  };
  const WatchedRun* watched_run(const std::string& run_json) const;
  std::unique_ptr<Watch> watch_;
  std::unique_ptr<Classroom> classroom_;
  std::string classroom_join_;                 // the join command the panel shows
  std::unique_ptr<ClassLesson> class_lesson_;  // after classroom_: it goes first
  void start_class_run(int lesson, bool chinese);
  void show_class_lesson(Snapshot& s) const;
  void add_to_class_run();
  ClassroomView classroom_view() const;
  mutable std::optional<WatchedRun> watched_;
  mutable bool watched_read_ = false;
  bool watch_described_ = false;  // the draft shows the watched run's description

  std::optional<Replay> replay_;
  std::optional<Curve> replay_curve_;
  std::vector<Curve> compared_;
  std::optional<SimSettings> recorded_;  // the run the replayed trace recorded
  std::string error_;
  ViewSettings view_;
  double cursor_s_ = 0;
  bool replay_playing_ = true;
  double replay_speed_ = 0;  // replay-seconds per real second; 0 = whole trace in 20 s
};

}  // namespace dsgd::gui
