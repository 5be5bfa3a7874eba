// The dashboard's tiling (gui/model/tiling.h) at the sizes and UI scales a classroom uses:
// every view gets its minimum in lines of text, the controls the width their widest row
// needs, and the tiles cover the display without overlapping. Then the windows on it
// (gui/views/window_tiling.h) in an ImGui context without a renderer: placed on the first
// frame, left where the user dragged them, put back when the display is resized or the
// user asks ("Reset layout"), and what does not fit is noted.
#include <catch2/catch.hpp>

#include <imgui.h>

#include <map>
#include <string>
#include <utility>

#include "gui/model/tiling.h"
#include "gui/views/window_tiling.h"

using namespace dsgd::gui;

namespace {

struct Size {
  float w, h;
};
constexpr Size kDisplays[] = {{1280, 720}, {1600, 900}, {1920, 1080}};
constexpr float kScales[] = {1.0f, 1.25f, 1.5f, 1.75f, 2.0f};
// The controls' widest row as dsgd-gui measures it ("step mode (hold every message)" with
// its check box, and the window's padding), in ems of its font.
constexpr float kControlsEm = 16.2f;

TextMetrics metrics_at(float scale) {
  TextMetrics m = default_text_metrics(kFontPx * scale, scale);
  m.controls_px = kControlsEm * m.font_px;
  return m;
}

float overlap(const Rect& a, const Rect& b) {
  const float w = std::min(a.x1, b.x1) - std::max(a.x0, b.x0);
  const float h = std::min(a.y1, b.y1) - std::max(a.y0, b.y0);
  return w > 0 && h > 0 ? w * h : 0;
}

}  // namespace

TEST_CASE("every view has room for its lines of text at classroom sizes and scales", "[gui]") {
  // A lesson, the all_reduce demo (its gradients in the convergence plot's place), or neither.
  for (const Size d : kDisplays)
    for (float scale : kScales)
      for (auto [lesson, demo] : {std::pair{false, false}, {true, false}, {false, true}}) {
        const TextMetrics m = metrics_at(scale);
        float area = 0;
        const std::vector<View> views = dashboard_views(View::all, lesson, demo);
        for (View v : views) {
          const Rect r = view_rect(v, View::all, d.w, d.h, lesson, m, demo);
          const MinSize min = min_size(v, m, demo);
          INFO(d.w << "x" << d.h << " scale " << scale << (lesson ? " lesson " : " ")
                   << (demo ? "demo " : "") << to_string(v) << ": " << r.width() << "x"
                   << r.height() << ", needs " << min.width_px << "x" << min.height_px);
          CHECK(r.x0 >= 0);
          CHECK(r.y0 >= 0);
          CHECK(r.x1 <= d.w);
          CHECK(r.y1 <= d.h);
          CHECK(r.width() + 0.5f >= min.width_px);
          CHECK(r.height() + 0.5f >= min.height_px);
          area += r.width() * r.height();
          for (View other : views)
            if (other != v)
              CHECK(overlap(r, view_rect(other, View::all, d.w, d.h, lesson, m, demo)) == 0);
        }
        CHECK(area == Approx(d.w * d.h).epsilon(1e-4));  // the tiles cover the display
        // The message log and where the time goes are the timeline window's tabs.
        const Rect timeline = view_rect(View::timeline, View::all, d.w, d.h, lesson, m, demo);
        for (View tab : {View::messages, View::time}) {
          const Rect r = view_rect(tab, View::all, d.w, d.h, lesson, m, demo);
          CHECK((r.x0 == timeline.x0 && r.y0 == timeline.y0 && r.x1 == timeline.x1 &&
                 r.y1 == timeline.y1));
          CHECK(r.height() + 0.5f >= min_size(tab, m).height_px);
        }
      }
}

TEST_CASE("the all_reduce demo's gradients take the convergence plot's place", "[gui]") {
  for (float scale : {1.0f, 2.0f}) {
    const TextMetrics m = metrics_at(scale);
    const Rect demo = view_rect(View::gradients, View::all, 1280, 720, false, m, true);
    const Rect topology = view_rect(View::topology, View::all, 1280, 720, false, m, true);
    CHECK(demo.y0 == 0);
    CHECK(demo.x0 == Approx(topology.x1));
    CHECK(demo.x1 == 1280);
    CHECK(demo.y1 == Approx(topology.y1));  // down to the timeline
    // Its caption and choice of values need more lines than training's caption.
    CHECK(min_size(View::gradients, m, true).height_px > min_size(View::gradients, m).height_px);
  }
  // A lesson runs its own demo: the lesson panel keeps the right-hand column.
  CHECK(dashboard_views(View::all, true, true).back() == View::lesson);
}

TEST_CASE("the minimums are lines of the font, so they grow with the UI scale", "[gui]") {
  const MinSize small = min_size(View::convergence, metrics_at(1.0f));
  const MinSize large = min_size(View::convergence, metrics_at(2.0f));
  CHECK(large.height_px == Approx(2 * small.height_px));
  CHECK(large.width_px == Approx(2 * small.width_px));
  // The convergence plot keeps its toggles, legend, a plot and an axis: 8 lines.
  const TextMetrics m = metrics_at(1.75f);
  CHECK(min_size(View::convergence, m).height_px >= m.title_px + 8 * m.line_px);
}

TEST_CASE("the controls column is as wide as its widest row", "[gui]") {
  TextMetrics m = metrics_at(1.0f);
  for (float controls : {200.0f, 300.0f, 420.0f}) {
    m.controls_px = controls;
    CHECK(view_rect(View::controls, View::all, 1600, 900, false, m).width() == Approx(controls));
  }
}

TEST_CASE("a short display puts the timeline beside the gradients, not under them", "[gui]") {
  const TextMetrics m = metrics_at(2.0f);
  const Rect timeline = view_rect(View::timeline, View::all, 1280, 720, false, m);
  const Rect gradients = view_rect(View::gradients, View::all, 1280, 720, false, m);
  CHECK(timeline.x0 == 0);
  CHECK(timeline.x1 == Approx(gradients.x0));
  // Roomy at scale 1: the timeline along the bottom of all but the controls.
  const TextMetrics one = metrics_at(1.0f);
  CHECK(view_rect(View::timeline, View::all, 1280, 720, false, one).x1 == 1280);
}

TEST_CASE("one view alone fills the display", "[gui]") {
  CHECK(view_rect(View::timeline, View::timeline, 800, 600).width() == 800);
  CHECK(dashboard_views(View::timeline, false) == std::vector<View>{View::timeline});
  CHECK(dashboard_views(View::all, true).back() == View::lesson);
}

namespace {

// An ImGui context without a renderer (the font atlas built, never uploaded).
struct ImGuiFrames {
  ImGuiFrames() {
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.DeltaTime = 1.0f / 60;
    io.Fonts->AddFontDefault();
    unsigned char* pixels = nullptr;
    int w = 0, h = 0;
    io.Fonts->GetTexDataAsRGBA32(&pixels, &w, &h);
  }
  ~ImGuiFrames() { ImGui::DestroyContext(); }
};

// One frame of a dashboard of empty windows (the controls with a row `controls_row_px`
// wide) on `tiling`; returns each window's rectangle.
std::map<View, Rect> frame(WindowTiling& tiling, WindowTiling::Key key, float controls_row_px) {
  ImGui::GetIO().DisplaySize = {key.width, key.height};
  ImGui::NewFrame();
  key.font_px = ImGui::GetFontSize();
  begin_tiling(tiling, key, false);
  std::map<View, Rect> out;
  for (View v : dashboard_views(key.only, key.lesson)) {
    place_window(tiling, v);
    ImGui::Begin(to_string(v));
    if (v == View::controls) ImGui::Dummy({controls_row_px, 10});
    const ImVec2 at = ImGui::GetWindowPos(), size = ImGui::GetWindowSize();
    out[v] = {at.x, at.y, at.x + size.x, at.y + size.y};
    measure_window(tiling, v);
    ImGui::End();
  }
  ImGui::Render();
  return out;
}

bool at_tile(const std::map<View, Rect>& windows, const WindowTiling& tiling, View v) {
  const std::vector<View> views = dashboard_views(tiling.key.only, tiling.key.lesson);
  const Rect& tile = tiling.rects[std::find(views.begin(), views.end(), v) - views.begin()];
  const Rect& w = windows.at(v);
  return std::abs(w.x0 - tile.x0) < 2 && std::abs(w.y0 - tile.y0) < 2 &&
         std::abs(w.x1 - tile.x1) < 2 && std::abs(w.y1 - tile.y1) < 2;
}

}  // namespace

TEST_CASE("windows re-tile when the display is resized or on Reset layout, not otherwise",
          "[gui]") {
  ImGuiFrames imgui;
  WindowTiling tiling;
  WindowTiling::Key key{.width = 1280, .height = 720, .resets = 0};
  frame(tiling, key, 200);
  std::map<View, Rect> windows = frame(tiling, key, 200);  // the controls measured: settled
  for (const auto& [v, r] : windows)
    CHECK(at_tile(windows, tiling, v));
  // The user drags the topology away: it stays there.
  ImGui::SetWindowPos(to_string(View::topology), {500, 300});
  windows = frame(tiling, key, 200);
  CHECK(windows.at(View::topology).x0 == 500);
  CHECK_FALSE(tiling.place);
  // The display grows: every window goes to its new tile.
  key.width = 1600;
  key.height = 900;
  frame(tiling, key, 200);
  windows = frame(tiling, key, 200);
  for (const auto& [v, r] : windows)
    CHECK(at_tile(windows, tiling, v));
  CHECK(windows.at(View::timeline).y1 == 900);
  // Dragged again, then "Reset layout".
  ImGui::SetWindowPos(to_string(View::timeline), {10, 10});
  windows = frame(tiling, key, 200);
  CHECK(windows.at(View::timeline).x0 == 10);
  ++key.resets;
  frame(tiling, key, 200);
  windows = frame(tiling, key, 200);
  CHECK(at_tile(windows, tiling, View::timeline));
}

TEST_CASE("the controls column takes the width its widest row measured", "[gui]") {
  ImGuiFrames imgui;
  WindowTiling tiling;
  const WindowTiling::Key key{.width = 1600, .height = 900, .resets = 0};
  frame(tiling, key, 380);  // the first frame: too narrow, noted
  CHECK_FALSE(tiling.problems.empty());
  const std::map<View, Rect> windows = frame(tiling, key, 380);
  const float padding = 2 * ImGui::GetStyle().WindowPadding.x;
  CHECK(windows.at(View::controls).width() >= 380 + padding - 1);
  CHECK(windows.at(View::controls).width() <= 380 + padding + 1);
  CHECK(tiling.problems.empty());
}

TEST_CASE("a display too small for the views is noted, window by window", "[gui]") {
  ImGuiFrames imgui;
  WindowTiling tiling;
  const WindowTiling::Key key{.width = 400, .height = 300, .resets = 0};
  frame(tiling, key, 100);
  frame(tiling, key, 100);
  REQUIRE_FALSE(tiling.problems.empty());
  CHECK(tiling.problems.front().find("under its minimum") != std::string::npos);
}
