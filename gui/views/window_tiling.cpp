#include "gui/views/window_tiling.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <imgui.h>
#include <imgui_internal.h>  // the window's CursorMaxPos: how far its rows reached

namespace dsgd::gui {
namespace {

TextMetrics text_metrics(const WindowTiling& tiling) {
  return {.font_px = ImGui::GetFontSize(),
          .line_px = ImGui::GetTextLineHeightWithSpacing(),
          .title_px = ImGui::GetFrameHeight(),
          .controls_px = tiling.controls_px};
}

bool same(const Rect& a, const Rect& b) {
  return std::abs(a.x0 - b.x0) < 0.5f && std::abs(a.y0 - b.y0) < 0.5f &&
         std::abs(a.x1 - b.x1) < 0.5f && std::abs(a.y1 - b.y1) < 0.5f;
}

// The minimum of `view`'s window (the demo's gradients need more than training's).
MinSize min_size_of(const WindowTiling& tiling, View view) {
  return min_size(view, text_metrics(tiling), tiling.key.demo && !tiling.key.lesson);
}

size_t index_of(View view, const WindowTiling& tiling) {
  const std::vector<View> views =
      dashboard_views(tiling.key.only, tiling.key.lesson, tiling.key.demo);
  return static_cast<size_t>(std::find(views.begin(), views.end(), view) - views.begin());
}

}  // namespace

void begin_tiling(WindowTiling& tiling, const WindowTiling::Key& key, bool fixed) {
  if (!(key == tiling.key)) {
    tiling.key = key;
    tiling.controls_px = 0;  // measured afresh in this font and language
  }
  const TextMetrics m = text_metrics(tiling);
  std::vector<Rect> rects;
  for (View view : dashboard_views(key.only, key.lesson, key.demo))
    rects.push_back(view_rect(view, key.only, key.width, key.height, key.lesson, m, key.demo));
  tiling.place = fixed || rects.size() != tiling.rects.size() ||
                 !std::equal(rects.begin(), rects.end(), tiling.rects.begin(), same);
  tiling.rects = std::move(rects);
  tiling.problems.clear();
}

void place_window(const WindowTiling& tiling, View view) {
  const size_t i = index_of(view, tiling);
  if (i >= tiling.rects.size()) return;
  const Rect& r = tiling.rects[i];
  // The user may shrink a window to its minimum, never below (nor below its tile, when the
  // display is too small to give it its minimum).
  const MinSize min = min_size_of(tiling, view);
  ImGui::SetNextWindowSizeConstraints(
      {std::min(min.width_px, r.width()), std::min(min.height_px, r.height())}, {1e6f, 1e6f});
  if (!tiling.place) return;
  ImGui::SetNextWindowPos({r.x0, r.y0}, ImGuiCond_Always);
  ImGui::SetNextWindowSize({r.width(), r.height()}, ImGuiCond_Always);
}

void measure_window(WindowTiling& tiling, View view) {
  const ImGuiWindow* window = ImGui::GetCurrentWindow();
  const float content_px = window->DC.CursorMaxPos.x - window->Pos.x + window->WindowPadding.x +
                           window->ScrollbarSizes.x;
  if (view == View::controls) tiling.controls_px = std::max(tiling.controls_px, content_px);
  const ImVec2 size = window->Size;
  const MinSize min = min_size_of(tiling, view);
  if (size.x + 1 < min.width_px || size.y + 1 < min.height_px)
    tiling.problems.push_back(
        fmt::format("the {} window is {:.0f}x{:.0f} px, under its minimum "
                    "{:.0f}x{:.0f} px",
                    to_string(view), size.x, size.y, min.width_px, min.height_px));
  if (content_px > size.x + 1)
    tiling.problems.push_back(
        fmt::format("the {} window is {:.0f} px wide, its widest row {:.0f} px: a label is cut off",
                    to_string(view), size.x, content_px));
}

}  // namespace dsgd::gui
