#include "gui/settings.h"

#include "gui/layout.h"

namespace dsgd::gui {

const char* to_string(RunMode mode) {
  return mode == RunMode::train ? "training" : "all_reduce demo";
}

std::string describe(const SimSettings& s) {
  std::string out = std::string(to_string(s.algorithm)) + ", " + std::to_string(s.nodes) +
                    " nodes, " + format_seconds(s.latency_s);
  if (s.bandwidth_Bps > 0) out += ", " + format_bytes(s.bandwidth_Bps) + "/s";
  if (!s.stragglers.empty()) out += ", straggler";
  if (!s.scenario_name.empty()) out += " (" + s.scenario_name + ")";
  return out;
}

const char* to_string(Layout layout) {
  switch (layout) {
    case Layout::automatic:
      return "auto";
    case Layout::ring:
      return "ring";
    case Layout::star:
      return "star";
    case Layout::grid:
      return "grid";
  }
  return "?";
}

const char* to_string(View view) {
  switch (view) {
    case View::all:
      return "all";
    case View::topology:
      return "topology";
    case View::convergence:
      return "convergence";
    case View::timeline:
      return "timeline";
    case View::gradients:
      return "gradients";
    case View::controls:
      return "controls";
    case View::lesson:
      return "lesson";
  }
  return "?";
}

std::optional<View> parse_view(const std::string& text) {
  for (View v : {View::all, View::topology, View::convergence, View::timeline, View::gradients,
                 View::controls, View::lesson})
    if (text == to_string(v)) return v;
  return std::nullopt;
}

}  // namespace dsgd::gui
