#include "gui/views/axis.h"

#include <algorithm>

#include <imgui.h>

namespace dsgd::gui {

float widest_label_px(const Axis& axis) {
  float widest = 0;
  for (const Tick& t : axis.ticks)
    widest = std::max(widest, ImGui::CalcTextSize(t.label.c_str()).x);
  return widest;
}

Axis fit_axis(double lo, double hi, float length_px, bool horizontal, bool log, TickFormat format,
              bool widen) {
  const float em = ImGui::GetFontSize();
  if (!horizontal) {  // widened to round ends only where there is room for a few ticks
    const int max_ticks = std::max(1, static_cast<int>(length_px / (1.5f * em)));
    return nice_axis(lo, hi, std::min(max_ticks, 8), log, format, widen && max_ticks >= 3);
  }
  // Fewer ticks while their labels, with two ems between them, do not fit.
  for (int max_ticks = std::max(1, static_cast<int>(length_px / (4 * em)));; --max_ticks) {
    Axis axis = nice_axis(lo, hi, std::min(max_ticks, 10), log, format, widen);
    const float need = static_cast<float>(axis.ticks.size()) * (widest_label_px(axis) + 2 * em);
    if (need <= length_px || max_ticks <= 1) return axis;
  }
}

}  // namespace dsgd::gui
