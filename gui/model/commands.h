// Commands: what a frame asks of the simulation and of the views. Draw functions push them
// (draw_controls: "pause"; draw_timeline: "scrub to 0.12 s"); the application drains the
// queue once per frame, after drawing, and applies each to the SimSession, the replay
// cursor or the ViewSettings. The GUI thread is the only user, so the queue is not locked.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "gui/model/settings.h"

namespace dsgd::gui {

enum class CommandKind {
  // simulation
  play,  // resume (and leave step mode)
  pause,
  set_speed,      // value
  set_step_mode,  // flag
  step_message,   // deliver one held message (step mode)
  step_training,  // run until the next training step ends, then pause
  set_link,       // settings: its default link applies to the running network from now on
  restart,        // settings
  // replay and views
  seek,              // value: the time cursor (replay), in the snapshot's time base
  select_message,    // index (-1: none)
  set_view,          // view
  start_lesson,      // index: the lesson's number; flag: in Chinese
  start_class_run,   // the classroom's next run, on every student waiting (index: a lesson, 0:
                     // training; flag: in Chinese)
  add_to_class_run,  // every student waiting into the elastic run under way
  // the window's own, done after rendering (exporter.h)
  save_png,    // index: the View to cut out of the frame (View::all: the whole window)
  record_gif,  // start recording a GIF, or stop and write it
};

struct Command {
  CommandKind kind = CommandKind::pause;
  double value = 0;
  bool flag = false;
  int index = -1;
  SimSettings settings;  // restart
  ViewSettings view;     // set_view
};

class Commands {
 public:
  void push(Command c) { queue_.push_back(std::move(c)); }
  void push(CommandKind kind) { queue_.push_back(Command{.kind = kind}); }
  void push(CommandKind kind, double value) {
    queue_.push_back(Command{.kind = kind, .value = value});
  }
  bool empty() const { return queue_.empty(); }
  size_t size() const { return queue_.size(); }
  const std::vector<Command>& pending() const { return queue_; }
  // Hands over everything pushed so far and empties the queue.
  std::vector<Command> drain() { return std::exchange(queue_, {}); }

 private:
  std::vector<Command> queue_;
};

}  // namespace dsgd::gui
