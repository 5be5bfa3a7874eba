// An axis fitted to the pixels it has: as many nice ticks (gui/model/ticks.h) as their labels
// leave room for in the current font, along a horizontal axis (labels side by side) or a
// vertical one (labels a line and a half apart). Shared by the convergence plot and the
// timeline. Not the drawing of the ticks: each view places them.
#pragma once

#include "gui/model/ticks.h"

namespace dsgd::gui {

Axis fit_axis(double lo, double hi, float length_px, bool horizontal, bool log, TickFormat format,
              bool widen);

// The widest of the axis's labels, in pixels.
float widest_label_px(const Axis& axis);

}  // namespace dsgd::gui
