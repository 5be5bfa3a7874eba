// The teacher's views driven with the mouse through an ImGui context that has no window and no
// renderer (ImGui lays out and hit-tests without either): the message log selects the row
// clicked, scrolls a message selected elsewhere into sight, follows the newest message and
// lays out only the rows in sight of thousands; the dashboard's bottom tabs and the speed
// presets ask for what was clicked.
#include <catch2/catch.hpp>

#include <imgui.h>

#include <cstdlib>
#include <functional>
#include <vector>

#include "gui/model/layout.h"
#include "gui/model/options.h"
#include "gui/views/views.h"

using namespace dsgd::gui;

namespace {

const ImVec2 kDisplay{1000, 600};
constexpr float kPad = 8;  // ImGui's window padding: content starts here

// One ImGui context, frames drawn into one window that fills the display.
class Frames {
 public:
  Frames() {
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.DisplaySize = kDisplay;
    unsigned char* pixels = nullptr;
    int w = 0, h = 0;
    io.Fonts->GetTexDataAsRGBA32(&pixels, &w, &h);  // builds the default font
  }
  ~Frames() { ImGui::DestroyContext(); }
  Frames(const Frames&) = delete;
  Frames& operator=(const Frames&) = delete;

  // A frame with the mouse at `mouse` (button down or up); returns the vertices drawn.
  int frame(const std::function<void()>& draw, ImVec2 mouse = {-1, -1}, bool down = false) {
    ImGuiIO& io = ImGui::GetIO();
    io.DeltaTime = 1.0f / 60;
    io.MousePos = mouse;
    io.MouseDown[0] = down;
    ImGui::NewFrame();
    ImGui::SetNextWindowPos({0, 0});
    ImGui::SetNextWindowSize(kDisplay);
    ImGui::Begin("test", nullptr,
                 ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoMove);
    draw();
    ImGui::End();
    ImGui::Render();
    return ImGui::GetDrawData()->TotalVtxCount;
  }
  // Hover, press and release at `at`.
  void click(const std::function<void()>& draw, ImVec2 at) {
    frame(draw, at, false);
    frame(draw, at, true);
    frame(draw, at, false);
  }
};

// `count` messages around a ring of 4, one every millisecond.
Snapshot log_snapshot(int count) {
  Snapshot s;
  s.world = 4;
  for (int i = 0; i < count; ++i)
    s.messages.push_back({.src = i % 4,
                          .dst = (i + 1) % 4,
                          .bytes = 64,
                          .send_s = i * 1e-3,
                          .arrive_s = i * 1e-3 + 5e-4,
                          .estimated = false,
                          .arrived = true});
  return s;
}

// The message the last select_message among `commands` chose (-2: none).
int selected_by(Commands& commands) {
  int index = -2;
  for (const Command& c : commands.drain())
    if (c.kind == CommandKind::select_message) index = c.index;
  return index;
}

float line_h() {
  return ImGui::GetTextLineHeight();
}

// A point inside the second of a row of framed items (buttons, tabs) at the top of the
// window, the first labelled `first`, `gap` apart.
ImVec2 second_item(const char* first, float gap) {
  const ImGuiStyle& style = ImGui::GetStyle();
  const float first_w = ImGui::CalcTextSize(first).x + 2 * style.FramePadding.x;
  return {kPad + first_w + gap + style.FramePadding.x + 4,
          kPad + style.FramePadding.y + line_h() / 2};
}

}  // namespace

TEST_CASE("the message log follows the newest message and lays out only rows in sight", "[gui]") {
  Frames frames;
  Snapshot s = log_snapshot(5000);
  Commands commands;
  MessageLogState state;
  const auto draw = [&] { draw_messages(s, commands, state); };
  int vertices = 0;
  for (int f = 0; f < 3; ++f)
    vertices = frames.frame(draw);
  // 5000 rows of 8 cells would be hundreds of thousands of vertices; the clipper draws ~40.
  CHECK(vertices < 40000);
  // Scrolled to its end: the row just above the window's bottom edge is among the newest.
  frames.click(draw, {kPad + 20, kDisplay.y - kPad - line_h()});
  const int newest = selected_by(commands);
  CHECK(newest >= 4995);
  CHECK(newest < 5000);
  // More messages arrive: the log follows them.
  s = log_snapshot(6000);
  for (int f = 0; f < 3; ++f)
    frames.frame(draw);
  frames.click(draw, {kPad + 20, kDisplay.y - kPad - line_h()});
  CHECK(selected_by(commands) >= 5995);
}

TEST_CASE("a message selected elsewhere is scrolled into the log's sight, once", "[gui]") {
  Frames frames;
  Snapshot s = log_snapshot(5000);
  Commands commands;
  MessageLogState state;
  const auto draw = [&] { draw_messages(s, commands, state); };
  frames.frame(draw);
  s.view.selected_message = 1234;  // clicked in the topology or the timeline
  for (int f = 0; f < 3; ++f)
    frames.frame(draw);
  CHECK(state.scrolled_to == 1234);
  // It is centred: a click in the middle of the table lands on it or next to it.
  const float table_top = kPad + 2 * line_h();
  frames.click(draw, {kPad + 20, (table_top + kDisplay.y - kPad) / 2});
  const int clicked = selected_by(commands);
  CHECK(std::abs(clicked - 1234) <= 2);
}

TEST_CASE("the bottom tabs ask for the tab clicked", "[gui]") {
  Frames frames;
  Snapshot s = log_snapshot(10);
  Commands commands;
  ViewState state;
  const auto draw = [&] { draw_bottom_tabs(s, commands, state); };
  frames.frame(draw);
  frames.click(draw, second_item("Timeline", ImGui::GetStyle().ItemInnerSpacing.x));  // Messages
  View asked = View::all;
  for (const Command& c : commands.drain())
    if (c.kind == CommandKind::set_view) asked = c.view.bottom;
  CHECK(asked == View::messages);
  CHECK(bottom_window_title(s) == "Timeline###timeline");
  s.view.bottom = View::time;
  CHECK(bottom_window_title(s) == "Where the time goes###timeline");
}

TEST_CASE("a speed preset sets the speed", "[gui]") {
  Frames frames;
  Snapshot s;
  s.controls.live = true;
  Commands commands;
  const auto draw = [&] { speed_presets(s, commands); };
  frames.frame(draw);
  frames.click(draw, second_item("0.01x", ImGui::GetStyle().ItemSpacing.x));  // 0.1x
  const std::vector<Command> pushed = commands.drain();
  REQUIRE(pushed.size() == 1);
  CHECK(pushed[0].kind == CommandKind::set_speed);
  CHECK(pushed[0].value == Approx(0.1));
}

TEST_CASE("the message log and where the time goes are the timeline window's tabs", "[gui]") {
  const auto same = [](Rect a, Rect b) {
    return a.x0 == b.x0 && a.y0 == b.y0 && a.x1 == b.x1 && a.y1 == b.y1;
  };
  for (bool lesson : {false, true}) {
    const Rect timeline = view_rect(View::timeline, View::all, 1920, 1080, lesson);
    CHECK(same(view_rect(View::messages, View::all, 1920, 1080, lesson), timeline));
    CHECK(same(view_rect(View::time, View::all, 1920, 1080, lesson), timeline));
  }
  // Alone, each fills the window.
  CHECK(same(view_rect(View::messages, View::messages, 1920, 1080), {0, 0, 1920, 1080}));
  // The all_reduce demo has no loss curve: its gradients take the whole right column's top.
  const Rect convergence = view_rect(View::convergence, View::all, 1920, 1080);
  const Rect gradients = view_rect(View::gradients, View::all, 1920, 1080);
  const Rect demo = view_rect(View::gradients, View::all, 1920, 1080, false, true);
  CHECK(same(demo, {convergence.x0, convergence.y0, gradients.x1, gradients.y1}));

  CHECK(parse_gui_options({"--view", "messages"}).view == View::messages);
  CHECK(parse_gui_options({"--view", "time"}).view == View::time);
  CHECK(parse_gui_options({}).view_settings.bottom == View::timeline);
  CHECK(parse_gui_options({"--tab", "time"}).view_settings.bottom == View::time);
  CHECK_THROWS_WITH(parse_gui_options({"--tab", "topology"}),
                    Catch::Contains("--tab topology: use timeline, messages or time"));
}

TEST_CASE("the timeline's note on dense messages is the legend's last entry, above the rows",
          "[gui]") {
  Frames frames;
  Snapshot s = log_snapshot(600);
  s.now_s = 1;
  const std::string note = "600 messages: their ends only (zoom in, or hover one, for lines)";
  ImVec2 last_min, last_max;
  frames.frame([&] {
    draw_timeline_legend(s, 600);
    last_min = ImGui::GetItemRectMin();
    last_max = ImGui::GetItemRectMax();
  });
  CHECK(last_max.x - last_min.x == Approx(ImGui::CalcTextSize(note.c_str()).x));
  frames.frame([&] {
    draw_timeline_legend(s, 0);
    last_min = ImGui::GetItemRectMin();
    last_max = ImGui::GetItemRectMax();
  });
  CHECK(last_max.x - last_min.x < ImGui::CalcTextSize(note.c_str()).x);
  // The whole timeline: its rows (the canvas, its last item) begin below the legend's line.
  float canvas_top = 0;
  Commands commands;
  frames.frame([&] {
    draw_timeline(s, commands);
    canvas_top = ImGui::GetItemRectMin().y;
  });
  CHECK(canvas_top >= last_max.y);
}
