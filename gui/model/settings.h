// What the user can choose: the settings a simulated run starts with (SimSettings: a run
// description, as every command takes, and the window's own), and how the views look
// (ViewSettings). Plain values, copied into every Snapshot so that draw
// functions can show them; changed only by draining Commands (commands.h).
// Not the simulation itself: SimSession (session.h) turns SimSettings into a run.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/comm/collectives.h"
#include "sim/run_spec.h"

namespace dsgd::gui {

enum class RunMode { train, allreduce_demo };
const char* to_string(RunMode mode);

// The window's own defaults where the flags say nothing: links slow enough that a message
// is seen to travel (2 ms, 1 Gbit/s), the ring, a small model for 300 steps, and a deadline
// of an hour (the teacher may pause for as long as they like).
sim::RunSpec gui_run_defaults();

struct SimSettings {
  RunMode mode = RunMode::train;
  sim::RunSpec run = gui_run_defaults();  // model, data, SGD, nodes, network, faults, ...
  int demo_elements = 0;                  // floats per rank in the demo; 0 = 2 per rank
  double speed = 1.0;                     // network clock speed (0.001 .. 1000)
  bool step_mode = false;
};

// A short label for curves and the title bar: "ring, 4 nodes, 2 ms, 1 Gbit/s", and the
// network's caption, in the window's language (ui_text.h).
std::string describe(const SimSettings& settings);
std::string network_caption(const sim::ClusterOptions& cluster);

// The faults the controls panel toggles, per rank of the next run.
double straggler_of(const sim::RunSpec& run, int rank);  // 1: none
void set_straggler(sim::RunSpec& run, int rank, double factor);
std::optional<int64_t> crash_step_of(const sim::RunSpec& run, int rank);
void set_crash_step(sim::RunSpec& run, int rank, std::optional<int64_t> step);

enum class Layout { automatic, ring, star, grid };
const char* to_string(Layout layout);

// messages (the message log) and time (where the time goes) share the timeline's window on
// the dashboard, as its tabs.
enum class View {
  all,
  topology,
  convergence,
  timeline,
  gradients,
  controls,
  lesson,
  messages,
  time
};
const char* to_string(View view);
std::optional<View> parse_view(const std::string& text);

enum class Theme { dark, light, projector };
// The UI scale the projector theme starts at when none larger was asked for (28 px text).
constexpr float kProjectorScale = 1.75f;

// What the all_reduce demo's bars show: the values now, each rank's input before the
// all_reduce, the sum every rank holds after it, or that sum divided by N (ReduceOp::AVG).
enum class DemoValues { now, before, sum, average };

struct ViewSettings {
  Layout layout = Layout::automatic;
  bool log_loss = false;
  bool loss_vs_time = false;   // x axis: model time instead of step
  double timeline_span_s = 0;  // visible width of the timeline; 0 = everything
  double timeline_end_s = 0;   // right edge when zoomed; 0 = follow now
  int selected_message = -1;   // index into Snapshot::messages
  Theme theme = Theme::dark;
  float ui_scale = 1.0f;
  bool chinese = false;         // the window in Simplified Chinese (ui_text.h)
  SimSettings draft;            // the controls panel's edits, applied by "restart"
  int lesson_pick = 1;          // the lesson picker's choice (a lesson number) ...
  bool lesson_zh = false;       // ... and language, applied by "open lesson"
  std::string dismissed_error;  // the error banner the user closed; another error shows again
  int layout_resets = 0;        // "Reset layout" presses: each puts the windows back in tiles
  // What a teacher picks in the message log, where the time goes, the demo and a replay.
  View bottom = View::timeline;              // the dashboard's bottom tab: timeline, messages, time
  int64_t time_step = 0;                     // where the time goes: this step; 0 = the latest
  DemoValues demo_values = DemoValues::now;  // the all_reduce demo's bars
  std::vector<double> bookmarks;             // replay: times to jump to (B adds one), sorted
};

}  // namespace dsgd::gui
