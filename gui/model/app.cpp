#include "gui/model/app.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/errors.h"
#include "gui/model/ui_text.h"
#include "sim/run_spec.h"

namespace dsgd::gui {

GuiApp::GuiApp() : lessons_(lesson_entries()) {}
GuiApp::~GuiApp() = default;

void GuiApp::start_lesson(int number, bool chinese, double speed) {
  if (session_) session_->stop();
  replay_.reset();
  replay_curve_.reset();
  error_.clear();
  forget_view_of_last_run();
  view_.lesson_pick = number;
  view_.lesson_zh = chinese;
  if (!lesson_) lesson_ = std::make_unique<LessonSession>();
  try {
    lesson_->start(number, chinese ? lessons::Lang::zh : lessons::Lang::en, speed);
  } catch (const std::exception& e) {
    error_ = e.what();
  }
}

void GuiApp::start_live(const SimSettings& settings) {
  if (lesson_) lesson_->stop();
  replay_.reset();
  replay_curve_.reset();
  error_.clear();
  forget_view_of_last_run();
  view_.draft = settings;
  if (!session_) session_ = std::make_unique<SimSession>();
  try {
    session_->start(settings);
  } catch (const std::exception& e) {
    error_ = e.what();
  }
}

void GuiApp::open_replay(const std::string& trace_path, const std::string& metrics_path) {
  if (session_) session_->stop();
  if (lesson_) lesson_->stop();
  replay_.reset();
  replay_curve_.reset();
  error_.clear();
  forget_view_of_last_run();
  try {
    replay_ = Replay::load(trace_path);
    cursor_s_ = replay_->begin_s();
    show_recorded_run();
    if (!metrics_path.empty()) replay_curve_ = load_metrics_curve(metrics_path);
  } catch (const std::exception& e) {
    error_ = e.what();
  }
}

void GuiApp::open_watch(const std::string& endpoint, const std::string& token) {
  try {
    open_watch(std::make_unique<Watch>(endpoint, token));
  } catch (const std::exception& e) {
    error_ = e.what();
  }
}

// The first watched run's description, once it comes, in the controls' draft (where
// "Restart" would run it here), as a replay shows the run it recorded.
void GuiApp::show_watched_run() {
  if (!watch_ || watch_described_) return;
  const WatchedRun* run = watched_run(watch_->state().run_json);
  if (!run) return;
  watch_described_ = true;
  view_.draft.run = run->settings.run;
}

// Read once, when the first hello brings it: not again each frame.
const GuiApp::WatchedRun* GuiApp::watched_run(const std::string& run_json) const {
  if (!watched_read_ && !run_json.empty()) {
    watched_read_ = true;
    try {
      SimSettings settings;
      settings.run = sim::run_spec_from_json(run_json, "the watched run");
      watched_ = WatchedRun{.settings = settings, .links = link_views(settings)};
    } catch (const std::exception&) {
      // shown without its description
    }
  }
  return watched_ ? &*watched_ : nullptr;
}

void GuiApp::open_watch(std::unique_ptr<Watch> watch) {
  watch_described_ = watched_read_ = false;
  watched_.reset();
  if (session_) session_->stop();
  if (lesson_) lesson_->stop();
  replay_.reset();
  error_.clear();
  forget_view_of_last_run();
  watch_ = std::move(watch);
}

// The runs watched: drawn with the first one's description (its network, its algorithm)
// and on model time when every event carries it (the clocks of separate machines differ;
// the link model's does not).
Snapshot GuiApp::watch_snapshot() const {
  const WatchState w = watch_->state();
  SnapshotInputs in;
  const WatchedRun* described = watched_run(w.run_json);
  if (described) {
    in = snapshot_inputs(described->settings.run);
    in.links = described->links;
  }
  in.world = std::max(in.world, w.world);
  in.time_base = w.model_time && !w.events.empty() ? TimeBase::model : TimeBase::wall;
  // Every sender has gone and nothing was dropped: the events hold every receive there was,
  // so a message never received (to or from a laptop that died) was lost, not in flight.
  in.complete = !w.senders.empty() && w.connected == 0 && w.dropped == 0;
  Snapshot s = build_snapshot(w.events, in);
  s.title = w.senders.empty()
                ? fmt::format(fmt::runtime(tr("watching {}: waiting for a run (--monitor)")),
                              watch_->endpoint())
                : fmt::format(fmt::runtime(tr("watching {}: {}")), watch_->endpoint(),
                              fmt::join(w.senders, ", "));
  if (described) {
    s.controls.settings = described->settings;
    s.network = network_caption(described->settings.run.cluster);
  }
  s.controls.watching = true;
  if (w.senders.size() > 1) s.rank_names = w.rank_names;  // one sender: every rank its
  s.controls.status = fmt::format(fmt::runtime(tr("{} connected, {} events dropped, {} refused")),
                                  w.connected, w.dropped, w.refused);
  s.view = view_;
  return s;
}

void GuiApp::open_replay(Replay replay, std::optional<Curve> curve) {
  if (session_) session_->stop();
  if (lesson_) lesson_->stop();
  error_.clear();
  forget_view_of_last_run();
  replay_ = std::move(replay);
  replay_curve_ = std::move(curve);
  cursor_s_ = replay_->begin_s();
  show_recorded_run();
}

void GuiApp::forget_view_of_last_run() {
  view_.timeline_span_s = 0;
  view_.timeline_end_s = 0;
  view_.selected_message = -1;
}

void GuiApp::seek(double t_s) {
  if (!replay_) return;
  cursor_s_ = std::clamp(t_s, replay_->begin_s(), replay_->end_s());
}

void GuiApp::seek_fraction(double f) {
  if (!replay_) return;
  seek(replay_->begin_s() + std::clamp(f, 0.0, 1.0) * (replay_->end_s() - replay_->begin_s()));
}

void GuiApp::apply(Commands& commands) {
  show_watched_run();
  for (Command& c : commands.drain()) {
    switch (c.kind) {
      case CommandKind::seek:
        seek(c.value);
        continue;
      case CommandKind::select_message:
        view_.selected_message = c.index;
        continue;
      case CommandKind::set_view:
        view_ = c.view;
        continue;
      case CommandKind::start_lesson:
        start_lesson(c.index, c.flag, view_.draft.speed);
        continue;
      case CommandKind::start_class_run:
        start_class_run(c.index, c.flag);
        continue;
      case CommandKind::add_to_class_run:
        add_to_class_run();
        continue;
      case CommandKind::set_speed:  // a restart keeps the pace the class chose
        if (!replay_) view_.draft.speed = c.value;
        break;
      case CommandKind::save_png:
      case CommandKind::record_gif:
        continue;  // the window's (exporter.h)
      default:
        break;
    }
    if (class_lesson_ && class_lesson_->apply(c)) continue;  // the laptops' lesson, stepped here
    if (watch_) continue;  // the watched runs are steered where they run
    if (replay_) {         // the simulation commands steer the replay's cursor instead
      if (c.kind == CommandKind::play) replay_playing_ = true;
      if (c.kind == CommandKind::pause) replay_playing_ = false;
      if (c.kind == CommandKind::set_speed)
        replay_speed_ = c.value * (replay_->end_s() - replay_->begin_s()) / 20;
      if (c.kind == CommandKind::restart) start_live(c.settings);
      continue;
    }
    if (c.kind == CommandKind::restart) {
      start_live(c.settings);
      continue;
    }
    if (lesson()) {  // a lesson takes the simulation commands while it is open
      lesson_->apply(c);
      continue;
    }
    if (!session_) continue;
    try {
      session_->apply(c);
    } catch (const std::exception& e) {
      error_ = e.what();
    }
  }
  if (session_) session_->poll();
  if (lesson_) lesson_->poll();
  if (class_lesson_) class_lesson_->poll();
}

void GuiApp::tick(double dt_s) {
  if (!replay_ || !replay_playing_) return;
  const double span = replay_->end_s() - replay_->begin_s();
  const double rate = replay_speed_ > 0 ? replay_speed_ : span / 20;
  cursor_s_ += rate * dt_s;
  if (cursor_s_ > replay_->end_s()) cursor_s_ = replay_->begin_s();  // loop, for a classroom
}

namespace {

// The run a trace recorded (its world from the trace where the description does not say:
// an MPI run's), or nothing for a trace written without one.
std::optional<SimSettings> recorded_settings(const Replay& replay) {
  if (replay.run_json().empty()) return std::nullopt;
  SimSettings settings;
  settings.run = sim::run_spec_from_json(replay.run_json(), replay.name());
  if (settings.run.cluster.nodes < 1) settings.run.cluster.nodes = replay.world();
  return settings;
}

}  // namespace

void GuiApp::show_recorded_run() {
  recorded_.reset();
  view_.bookmarks.clear();  // they were the previous trace's times
  try {
    recorded_ = recorded_settings(*replay_);
  } catch (const std::exception& e) {
    error_ = e.what();
  }
  if (recorded_) view_.draft = *recorded_;  // the controls show it; Restart runs it live
}

Snapshot GuiApp::replay_snapshot() const {
  SnapshotInputs in;
  if (recorded_ && replay_->summary().ranks > 0) {
    in = grouped_snapshot_inputs(recorded_->run, replay_->summary());
  } else if (recorded_) {
    in = snapshot_inputs(recorded_->run);
    in.links = link_views(*recorded_);
  }
  in.time_base = replay_->time_base();
  in.now_s = cursor_s_;
  in.algorithm = replay_->all_reduce_algorithm();
  in.complete = true;  // a trace holds every receive there was
  Snapshot s = build_snapshot(replay_->events(), in);
  s.summary = replay_->summary();
  s.begin_s = replay_->begin_s();
  s.end_s = replay_->end_s();
  s.title = std::string(tr("replay")) + " - " +
            std::filesystem::path(replay_->name()).filename().string();  // not a temporary dir
  if (recorded_) s.title += ": " + describe(*recorded_);
  if (s.summary.ranks > 0)
    s.title += fmt::format(fmt::runtime(tr(" ({} ranks shown as {} groups)")), s.summary.ranks,
                           s.summary.groups);
  if (recorded_) {
    s.controls.settings = *recorded_;
    s.network = network_caption(recorded_->run.cluster);
  }
  s.controls.status = replay_playing_ ? "replaying" : "replay paused";
  s.controls.paused = !replay_playing_;
  // The speed as set_speed gave it: 1 = the whole trace in 20 s.
  const double span = replay_->end_s() - replay_->begin_s();
  if (replay_speed_ > 0 && span > 0) s.controls.speed = replay_speed_ * 20 / span;
  if (replay_curve_) s.curves.push_back(*replay_curve_);
  s.view = view_;
  return s;
}

Snapshot GuiApp::snapshot() const {
  Snapshot s;
  if (replay_) {
    s = replay_snapshot();
  } else if (watch_) {
    s = watch_snapshot();
  } else if (lesson_ && lesson_->active()) {
    s = lesson_->snapshot(view_);
  } else if (session_) {
    s = session_->snapshot(view_);
  } else {
    s.view = view_;
  }
  s.curves.insert(s.curves.begin(), compared_.begin(), compared_.end());
  s.compared_curves = compared_.size();
  if (!error_.empty()) {  // the app's own error (a trace it could not read): bad input
    s.error = error_;
    s.error_is_fault = false;
  }
  if (class_lesson_) show_class_lesson(s);
  s.lesson.catalog = lessons_;
  if (classroom_) {
    s.classroom = classroom_view();
    const ClassroomState& c = s.classroom.state;
    s.title = c.run == 0 ? fmt::format(fmt::runtime(tr("classroom on port {}: {} joined")),
                                       classroom_->port(), c.students.size())
                         : fmt::format(fmt::runtime(tr("classroom on port {}: run {} on {}")),
                                       classroom_->port(), c.run, laptops(c.world));
  }
  return s;
}

}  // namespace dsgd::gui
