// The dashboard's windows on the tiling (gui/model/tiling.h): measures the font and the
// controls' widest row, puts every window back in its tile whenever the tiles change (the
// display resized, the UI scale or language changed, a lesson opened, "Reset layout") and
// otherwise leaves where the user dragged them; and notes what does not fit (a window under
// its minimum size, a row wider than its window), which --headless prints. Not the views.
#pragma once

#include <string>
#include <vector>

#include "gui/model/tiling.h"

namespace dsgd::gui {

struct WindowTiling {
  // What the tiles were made for; any change re-tiles and measures the controls afresh.
  struct Key {
    float width = 0, height = 0, font_px = 0;
    View only = View::all;
    bool lesson = false, demo = false, chinese = false;
    int resets = -1;
    Theme theme = Theme::dark;
    bool operator==(const Key&) const = default;
  };
  Key key;
  float controls_px = 0;    // the controls' widest row so far (only grows until the key changes)
  std::vector<Rect> rects;  // the tiles of the last frame, in dashboard_views order
  bool place = true;        // this frame puts the windows in their tiles
  std::vector<std::string> problems;  // this frame's: what did not fit
};

// Starts a frame's tiling: the tiles for this display, font and key. `fixed`: every frame
// puts the windows in place (headless).
void begin_tiling(WindowTiling& tiling, const WindowTiling::Key& key, bool fixed);
// Before Begin() of `view`'s window: its position, size and smallest size.
void place_window(const WindowTiling& tiling, View view);
// Before End() of `view`'s window: measures how wide its content is (the controls' width for
// the next frame) and notes a window under its minimum or a row wider than it.
void measure_window(WindowTiling& tiling, View view);

}  // namespace dsgd::gui
