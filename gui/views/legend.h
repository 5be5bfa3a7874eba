// Items laid out like words, wrapping where the window's width ends rather than running
// past it; and legends laid out so: entries (a swatch drawn as the plot draws the thing,
// and its label), as ImGui items so that the window's layout counts them. Used by the
// convergence plot, the timeline and the lesson panel. Not the plots' axes (axis.h).
#pragma once

#include <string>
#include <vector>

#include "gui/model/layout.h"

namespace dsgd::gui {

enum class Swatch {
  line,       // a curve or a message line
  dot,        // a marker
  small_dot,  // a smaller marker
  box,        // a filled bar (a timeline slice)
  tick,       // a short vertical mark (a message's end)
  none        // a heading for the entries after it
};

struct LegendEntry {
  Swatch swatch = Swatch::box;
  Rgba colour = 0;
  std::string label;
};

// ImGui::SameLine() when an item `width_px` wide still fits after the last item (with the
// spacing `gap_px`, or the style's), else nothing: the item goes on the next line.
bool same_line_if_fits(float width_px, float gap_px = -1);
// The widths of a button's and a check box's or radio button's with `label`.
float button_width(const char* label);
float check_box_width(const char* label);

// The entries from the cursor on, in `text` colour, the next item below them; `same_line`:
// beginning on the line of the item before, where there is room.
void draw_legend(const std::vector<LegendEntry>& entries, Rgba text, bool same_line = false);

}  // namespace dsgd::gui
