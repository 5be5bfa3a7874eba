// Where draw_dashboard puts each view's window: the controls in a column as wide as their
// widest row, the topology beside them, convergence and gradients (or the lesson panel, or
// in the all_reduce demo, which has no loss curve, the gradients alone) on the right, the
// timeline along the bottom, its window holding the message log and where the time goes as
// tabs; every size comes from the font, so that each
// view keeps room for its minimum number of text lines at any UI scale. When the display is
// too short for convergence and gradients above a full-width timeline, the right column
// runs the full height instead. No ImGui here: the dashboard measures the font, and tests
// check the rectangles at the sizes and scales a classroom uses.
#pragma once

#include <vector>

#include "gui/model/settings.h"

namespace dsgd::gui {

struct Rect {
  float x0, y0, x1, y1;
  float width() const { return x1 - x0; }
  float height() const { return y1 - y0; }
};

// The font's size at UI scale 1, in pixels (theme.cpp rasterises it at kFontPx x scale).
constexpr float kFontPx = 16;

// The font as the tiling sees it, in pixels.
struct TextMetrics {
  float font_px = kFontPx;  // the font's size (an "em")
  float line_px = 20;       // a line of text and the spacing under it
  float title_px = 22;      // a window's title bar
  float controls_px = 0;    // the controls' widest row, padding included; 0: not measured yet
};
// The metrics of ImGui's default style scaled by `scale` with a font of `font_px` (what
// theme.cpp sets up), the controls' width not measured.
TextMetrics default_text_metrics(float font_px, float scale);

// The smallest window a view needs to show its content without clipping a label: lines of
// text below its title bar, and a width in ems (the controls: their measured width). `demo`:
// the gradients of the all_reduce demo, with its caption and choice of values above the bars.
struct MinSize {
  float width_px, height_px;
};
MinSize min_size(View view, const TextMetrics& m, bool demo = false);

// The window of `view` in a display of width x height pixels (the whole display when showing
// only one view); with a lesson open its panel takes the right-hand column (convergence and
// gradients make way); in the all_reduce demo (`demo`, no lesson) the gradients take the
// convergence plot's place as well. The message log and where the time goes get the
// timeline's window, whose tabs they are.
Rect view_rect(View view, View only, float width, float height, bool lesson, const TextMetrics& m,
               bool demo = false);
// The same with the default metrics at scale 1 (a kFontPx font).
Rect view_rect(View view, View only, float width, float height, bool lesson = false,
               bool demo = false);

// The views the dashboard shows (with or without a lesson, in the all_reduce demo or not), in
// drawing order.
std::vector<View> dashboard_views(View only, bool lesson, bool demo = false);

}  // namespace dsgd::gui
