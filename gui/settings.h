// What the user can choose: the settings a simulated run starts with (SimSettings) and how
// the views look (ViewSettings). Plain values, copied into every Snapshot so that draw
// functions can show them; changed only by draining Commands (commands.h).
// Not the simulation itself: SimSession (session.h) turns SimSettings into a run.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "core/comm/collectives.h"
#include "sim/scenario.h"

namespace dsgd::gui {

enum class RunMode { train, allreduce_demo };
const char* to_string(RunMode mode);

struct SimSettings {
  RunMode mode = RunMode::train;
  int nodes = 4;
  Algorithm algorithm = Algorithm::ring;
  // The default link is slow enough that messages are visible at speed 1.
  double latency_s = 2e-3;
  double bandwidth_Bps = 125e6;  // 1 Gbit/s; 0 = unlimited
  double jitter_s = 0;
  double loss = 0;
  std::map<int, double> stragglers;  // rank -> compute slow-down factor
  std::map<int, int64_t> crashes;    // rank -> the step at which it dies
  std::string model = "mlp:32";
  std::string data = "synthetic";
  float lr = 0.1f;
  int64_t batch = 256;    // global
  int64_t steps = 300;    // training steps, or all_reduce rounds in the demo
  int demo_elements = 0;  // floats per rank in the demo; 0 = 2 per rank
  double speed = 1.0;     // network clock speed (0.001 .. 1000)
  bool step_mode = false;
  uint64_t seed = 0;
  std::optional<sim::Scenario> scenario;  // its network and faults replace the link fields
  std::string scenario_name;              // for labels
};

// A short label for curves and the title bar: "ring, 4 nodes, 2 ms, 1 Gbit/s".
std::string describe(const SimSettings& settings);

enum class Layout { automatic, ring, star, grid };
const char* to_string(Layout layout);

enum class View { all, topology, convergence, timeline, gradients, controls, lesson };
const char* to_string(View view);
std::optional<View> parse_view(const std::string& text);

enum class Theme { dark, light, projector };

struct ViewSettings {
  Layout layout = Layout::automatic;
  bool log_loss = false;
  bool loss_vs_time = false;   // x axis: model time instead of step
  double timeline_span_s = 0;  // visible width of the timeline; 0 = everything
  double timeline_end_s = 0;   // right edge when zoomed; 0 = follow now
  int selected_message = -1;   // index into Snapshot::messages
  Theme theme = Theme::dark;
  float ui_scale = 1.0f;
  bool chinese = false;    // window titles and captions in Simplified Chinese
  SimSettings draft;       // the controls panel's edits, applied by "restart"
  int lesson_pick = 1;     // the lesson picker's choice (a lesson number) ...
  bool lesson_zh = false;  // ... and language, applied by "open lesson"
};

}  // namespace dsgd::gui
