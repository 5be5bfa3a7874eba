#include "gui/app.h"

#include <algorithm>

#include "core/errors.h"

namespace dsgd::gui {

void GuiApp::start_live(const SimSettings& settings) {
  replay_.reset();
  replay_curve_.reset();
  error_.clear();
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
  replay_.reset();
  replay_curve_.reset();
  error_.clear();
  try {
    replay_ = Replay::load(trace_path);
    cursor_s_ = replay_->begin_s();
    if (!metrics_path.empty()) replay_curve_ = load_metrics_curve(metrics_path);
  } catch (const std::exception& e) {
    error_ = e.what();
  }
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
      default:
        break;
    }
    if (replay_) {  // the simulation commands steer the replay's cursor instead
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
    if (!session_) continue;
    try {
      session_->apply(c);
    } catch (const std::exception& e) {
      error_ = e.what();
    }
  }
  if (session_) session_->poll();
}

void GuiApp::tick(double dt_s) {
  if (!replay_ || !replay_playing_) return;
  const double span = replay_->end_s() - replay_->begin_s();
  const double rate = replay_speed_ > 0 ? replay_speed_ : span / 20;
  cursor_s_ += rate * dt_s;
  if (cursor_s_ > replay_->end_s()) cursor_s_ = replay_->begin_s();  // loop, for a classroom
}

Snapshot GuiApp::snapshot() const {
  Snapshot s;
  if (replay_) {
    SnapshotInputs in{.time_base = replay_->time_base(), .now_s = cursor_s_};
    s = build_snapshot(replay_->events(), in);
    s.begin_s = replay_->begin_s();
    s.end_s = replay_->end_s();
    s.title = "replay - " + replay_->name();
    s.controls.status = replay_playing_ ? "replaying" : "replay paused";
    s.controls.paused = !replay_playing_;
    if (replay_curve_) s.curves.push_back(*replay_curve_);
    s.view = view_;
  } else if (session_) {
    s = session_->snapshot(view_);
  } else {
    s.view = view_;
  }
  if (!error_.empty()) s.error = error_;
  return s;
}

}  // namespace dsgd::gui
