#include "gui/model/tiling.h"

#include <algorithm>
#include <vector>

namespace dsgd::gui {
namespace {

// The controls' width before the dashboard has measured them, in ems: narrow, as the
// measurement only grows it (window_tiling.h).
constexpr float kControlsGuessEm = 12;

// Shares `total` between a part that would like `want` and must have `min_a`, and the rest,
// which must have `min_b`; when both minimums do not fit, in proportion to them.
float split(float total, float want, float min_a, float min_b) {
  if (min_a + min_b > total) return total * min_a / (min_a + min_b);
  return std::clamp(want, min_a, total - min_b);
}

// The two ways the dashboard tiles. Roomy: the controls run the full height beside the
// topology and the right column (convergence above gradients, the lesson, or the demo's
// gradients alone), the timeline along the bottom of the rest. Compact, when the roomy one
// leaves a view under its minimum (a large UI scale on a small display): one row of
// controls, topology and convergence (the demo: its gradients), and under it the timeline
// from the left edge beside the gradients.
enum class Arrangement { roomy, compact };

// What the right-hand column holds: convergence above gradients, the lesson panel (a lesson
// runs its own all_reduce demo), or the all_reduce demo's gradients alone.
enum class Right { plots, lesson, demo };

Right right_of(bool lesson, bool demo) {
  return lesson ? Right::lesson : demo ? Right::demo : Right::plots;
}

struct Tiles {
  Rect controls, topology, convergence, gradients, timeline, lesson;
};

Tiles tile(Arrangement arrangement, float w, float h, Right right, const TextMetrics& m) {
  const auto min_w = [&](View v) { return min_size(v, m, right == Right::demo).width_px; };
  const auto min_h = [&](View v) { return min_size(v, m, right == Right::demo).height_px; };
  const bool roomy = arrangement == Arrangement::roomy, lesson = right == Right::lesson;
  const bool plots = right == Right::plots;
  // The view in the right column's top row, and the column's width.
  const View right_view = lesson ? View::lesson : plots ? View::convergence : View::gradients;
  const float right_min_w = std::max(min_w(right_view), plots ? min_w(View::gradients) : 0);
  // The middle column holds the timeline too when a lesson panel takes the whole right.
  const float middle_min_w =
      std::max(min_w(View::topology), lesson && roomy ? min_w(View::timeline) : 0.0f);
  const float cw =
      split(w, min_w(View::controls), min_w(View::controls), middle_min_w + right_min_w);
  const float rest = w - cw;
  const float rx = w - split(rest, rest * (lesson ? 0.55f : 0.5f), right_min_w, middle_min_w);
  // The rows: what must fit above the timeline (its own row's minimum below).
  float top_min = min_h(View::topology), bottom_min = min_h(View::timeline);
  if (roomy && !lesson)
    top_min = std::max(top_min, plots ? min_h(View::convergence) + min_h(View::gradients)
                                      : min_h(View::gradients));
  if (!roomy)  // the controls and the right view share the top row (a lesson runs full height)
    top_min = std::max({top_min, min_h(View::controls), lesson ? 0 : min_h(right_view)});
  if (!roomy && plots) bottom_min = std::max(bottom_min, min_h(View::gradients));
  const float top = split(h, 0.6f * h, top_min, bottom_min);
  Tiles t;
  t.controls = {0, 0, cw, roomy ? h : top};
  t.topology = {cw, 0, rx, top};
  t.lesson = {rx, 0, w, h};
  t.timeline = {roomy ? cw : 0, top, lesson || (plots && !roomy) ? rx : w, h};
  if (right == Right::demo) {
    t.gradients = {rx, 0, w, top};
  } else if (roomy) {
    const float conv_h = split(top, 0.57f * top, min_h(View::convergence), min_h(View::gradients));
    t.convergence = {rx, 0, w, conv_h};
    t.gradients = {rx, conv_h, w, top};
  } else {
    t.convergence = {rx, 0, w, top};
    t.gradients = {rx, top, w, h};
  }
  return t;
}

Rect tile_of(const Tiles& t, View view) {
  switch (view) {
    case View::controls:
      return t.controls;
    case View::topology:
      return t.topology;
    case View::convergence:
      return t.convergence;
    case View::gradients:
      return t.gradients;
    case View::timeline:
    case View::messages:  // the timeline window's tabs
    case View::time:
      return t.timeline;
    case View::lesson:
      return t.lesson;
    case View::all:
      break;
  }
  return {0, 0, 0, 0};
}

// Whether every view shown gets its minimum size (half a pixel spare for rounding).
bool fits(const Tiles& t, Right right, const TextMetrics& m) {
  for (View v : dashboard_views(View::all, right == Right::lesson, right == Right::demo)) {
    const Rect r = tile_of(t, v);
    const MinSize min = min_size(v, m, right == Right::demo);
    if (r.width() + 0.5f < min.width_px || r.height() + 0.5f < min.height_px) return false;
  }
  return true;
}

}  // namespace

TextMetrics default_text_metrics(float font_px, float scale) {
  // ImGui's default style: ItemSpacing.y = 4, FramePadding.y = 3, scaled by ScaleAllSizes.
  return {.font_px = font_px, .line_px = font_px + 4 * scale, .title_px = font_px + 6 * scale};
}

MinSize min_size(View view, const TextMetrics& m, bool demo) {
  float lines = 0, ems = 0;
  switch (view) {
    case View::controls:  // scrolls: a few rows, as wide as its widest
      return {m.controls_px > 0 ? m.controls_px : kControlsGuessEm * m.font_px,
              m.title_px + 6 * m.line_px};
    case View::topology:  // the ranks, their labels, the caption
      lines = 8, ems = 10;
      break;
    case View::convergence:  // toggles, legend, a plot of 3 lines, the x axis and its title
      lines = 8, ems = 12;
      break;
    case View::gradients:  // caption and three rows; the demo: a longer caption, its
                           // choice of values and what they are
      lines = demo ? 8 : 5, ems = demo ? 13 : 10;
      break;
    case View::timeline:  // the tabs, zoom bar, legend, three rows, the axis
    case View::messages:  // the tabs, a caption, the header and four rows
    case View::time:      // the tabs, the step, legend, a sentence and three bars
      lines = 7, ems = 20;
      break;
    case View::lesson:  // its picker, buttons and some text, wrapped
      lines = 10, ems = 13;
      break;
    case View::all:
      break;
  }
  return {ems * m.font_px, m.title_px + lines * m.line_px};
}

std::vector<View> dashboard_views(View only, bool lesson, bool demo) {
  if (only != View::all) return {only};
  if (lesson) return {View::controls, View::topology, View::timeline, View::lesson};
  if (demo) return {View::controls, View::topology, View::gradients, View::timeline};
  return {View::controls, View::topology, View::convergence, View::gradients, View::timeline};
}

Rect view_rect(View view, View only, float w, float h, bool lesson, const TextMetrics& m,
               bool demo) {
  if (only != View::all) return {0, 0, w, h};
  const Right right = right_of(lesson, demo);
  const Tiles roomy = tile(Arrangement::roomy, w, h, right, m);
  return tile_of(fits(roomy, right, m) ? roomy : tile(Arrangement::compact, w, h, right, m), view);
}

Rect view_rect(View view, View only, float w, float h, bool lesson, bool demo) {
  return view_rect(view, only, w, h, lesson, default_text_metrics(kFontPx, 1), demo);
}

}  // namespace dsgd::gui
