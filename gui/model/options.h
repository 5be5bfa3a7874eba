// The command line of dsgd-gui: what to show (a live run from settings or a scenario, or a
// replayed trace), how (theme, projector scale, one view or all), the headless mode that
// renders N frames under Xvfb and writes a screenshot, and a GIF recording (--record).
// Not the window: main() acts on it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gui/model/recording.h"
#include "gui/model/settings.h"

namespace dsgd::gui {

struct GuiOptions {
  SimSettings sim;             // the run (flags of `dsgd train`, --scenario) and its pace
  std::string replay;          // a Chrome trace from `dsgd train --trace`
  std::string replay_metrics;  // optional metrics JSONL for the replay's loss curve
  std::string compare;         // `dsgd compare --json` output, overlaid in the convergence view
  std::string watch;           // "PORT" or "HOST:PORT": show the runs streaming to it (watch.h)
  std::string token;           // --watch, --classroom: the job token runs and students present
  // --classroom: host a class whose students' laptops are the ranks (classroom.h), on
  // classroom_host:classroom_port; headless, start a training run once start_when have joined.
  bool classroom = false;
  std::string classroom_host = "0.0.0.0";
  int classroom_port = 29500;
  int start_when = 0;
  // > 0: open this lesson (as `dsgd lesson N`) in step mode; with --classroom, the lesson
  // the panel offers (headless: started on start_when laptops and stepped to its end).
  int lesson = 0;
  bool lesson_zh = false;  // --lang zh
  View view = View::all;
  ViewSettings view_settings;
  std::string font;  // a TTF/TTC with CJK glyphs; empty = the Debian WenQuanYi font if present
  int width = 1600, height = 900;
  // Headless: render `frames` frames (no vsync), then write `screenshot`.
  bool headless = false;
  int frames = 60;
  std::string screenshot;
  int64_t min_steps = 0;   // headless: before the last frame wait for this many steps
  int step_messages = 0;   // headless: deliver this many messages in step mode first
  double seek = -1;        // replay: put the cursor at this fraction (0..1) and pause
  double timeout_s = 120;  // headless (--wait): give up waiting for min_steps after this
  // --record FILE.gif: the first `frames` frames into an animated GIF (path empty: none);
  // --record-every, --record-scale and --record-delay also shape the Record GIF button's.
  RecordOptions record;
};

// UsageError naming the flag for bad values; the help text for -h is thrown as HelpRequested.
struct HelpRequested {
  std::string text;
};
GuiOptions parse_gui_options(const std::vector<std::string>& args);

}  // namespace dsgd::gui
