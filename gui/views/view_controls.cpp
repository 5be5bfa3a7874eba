// The controls panel (play, pause, step a message or a training step, speed; the settings
// of the next run and restart; faults; view options; the replay's scrubber) and the
// dashboard that places one window per view.
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <imgui.h>

#include "gui/model/progress.h"
#include "gui/model/shortcuts.h"
#include "gui/views/legend.h"
#include "gui/views/theme.h"
#include "gui/views/views.h"
#include "gui/views/window_tiling.h"

namespace dsgd::gui {
namespace {

// The error, impossible to miss and not a crash: a banner along the bottom of the window
// (over the timeline's axis, not over a rank), until the user closes it (its x, or Esc).
void draw_error_banner(const Snapshot& s, Commands& commands, ImVec2 display) {
  if (!error_banner_shown(s)) return;
  ImGui::SetNextWindowPos({display.x * 0.5f, display.y - 4}, ImGuiCond_Always, {0.5f, 1.0f});
  ImGui::SetNextWindowSize({display.x * 0.7f, 0}, ImGuiCond_Always);
  ImGui::PushStyleColor(ImGuiCol_WindowBg, ImVec4(0.55f, 0.05f, 0.05f, 0.95f));
  ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1, 1, 1, 1));
  bool open = true;
  ImGui::Begin(tr(s.error_is_fault ? "The run ended by a fault (Esc closes this)###error"
                                   : "Error (Esc closes this)###error"),
               &open, ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoResize);
  ImGui::TextWrapped("%s", s.error.c_str());
  ImGui::End();
  ImGui::PopStyleColor(2);
  if (!open) commands.push(dismiss_error(s));
}

// Play / Pause while a run goes on; once it has ended (finished, failed, crashed) there is
// nothing to pause: the button runs it again, as it was.
void play_button(const Snapshot& s, Commands& commands) {
  const ControlState& c = s.controls;
  if (c.live && !c.running && !s.lesson.active) {
    if (ImGui::Button(tr("Run again")))
      commands.push(Command{.kind = CommandKind::restart, .settings = c.settings});
    return;
  }
  const bool play = c.paused || c.step_mode;
  if (ImGui::Button(tr(play ? "Play###play" : "Pause###play")))
    commands.push(play ? CommandKind::play : CommandKind::pause);
}

// Where a view's window is, in the framebuffer's pixels (a PNG of one view cuts it out).
void remember_window(View view, ImVec2 at, ImVec2 size, ViewWindows& windows) {
  const ImVec2 scale = ImGui::GetIO().DisplayFramebufferScale;
  windows.push_back({view, Rect{at.x * scale.x, at.y * scale.y, (at.x + size.x) * scale.x,
                                (at.y + size.y) * scale.y}});
}

// For slides: a PNG of the window or of one view, and a GIF recorded until pressed again
// (exporter.h writes them, after the frame is rendered).
void export_buttons(const Snapshot& s, Commands& commands) {
  const ExportView& e = s.exporting;
  if (ImGui::Button(tr("Save PNG")))
    commands.push(Command{.kind = CommandKind::save_png, .index = static_cast<int>(View::all)});
  if (e.views.size() > 1) {  // a combo that acts on the choice, keeping none
    const char* one = tr("Save PNG of one view");
    same_line_if_fits(ImGui::CalcTextSize(one).x + ImGui::GetFrameHeight() +
                      3 * ImGui::GetStyle().FramePadding.x);  // else on a line of its own
    ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x);
    if (ImGui::BeginCombo("##png_of_view", one)) {
      for (View v : e.views)
        if (ImGui::Selectable(view_title(v, s.view.chinese)))
          commands.push(Command{.kind = CommandKind::save_png, .index = static_cast<int>(v)});
      ImGui::EndCombo();
    }
  }
  // No frame counter: it would tick in every frame of the GIF.
  if (ImGui::Button(tr(e.recording ? "Stop recording###record" : "Record GIF###record"),
                    ImVec2(-1, 0)))
    commands.push(CommandKind::record_gif);
  if (!e.message.empty()) ImGui::TextWrapped("%s", e.message.c_str());
}

void run_controls(const Snapshot& s, Commands& commands) {
  const ControlState& c = s.controls;
  if (c.watching) {  // steered where it runs
    ImGui::Text("%s: %s", tr("status"), c.status.c_str());
    return;
  }
  play_button(s, commands);
  if (c.live) {
    ImGui::BeginDisabled(!c.running);
    ImGui::SameLine();
    if (ImGui::Button(tr("Step message"))) commands.push(CommandKind::step_message);
    if (!s.lesson.active && ImGui::Button(tr("Step training step")))
      commands.push(CommandKind::step_training);
    bool step_mode = c.step_mode;
    if (ImGui::Checkbox(tr("step mode (hold every message)"), &step_mode))
      commands.push(Command{.kind = CommandKind::set_step_mode, .flag = step_mode});
    ImGui::EndDisabled();
    float log_speed = static_cast<float>(std::log10(std::max(0.001, c.speed)));
    if (ImGui::SliderFloat(tr("speed"), &log_speed, -3.0f, 1.0f,
                           fmt::format("{:.3g}x", std::pow(10.0, log_speed)).c_str()))
      commands.push(CommandKind::set_speed, std::pow(10.0, log_speed));
    if (c.total_steps > 0) {
      const float f = static_cast<float>(c.step) / static_cast<float>(c.total_steps);
      ImGui::ProgressBar(std::min(1.0f, f), ImVec2(-1, 0), progress_label(s).c_str());
    }
  } else if (s.world > 0) {
    float t = static_cast<float>(s.now_s);
    if (ImGui::SliderFloat(tr("time"), &t, static_cast<float>(s.begin_s),
                           static_cast<float>(s.end_s), format_seconds(s.now_s).c_str()))
      commands.push(CommandKind::seek, t);
    float speed = static_cast<float>(c.speed);
    if (ImGui::SliderFloat(tr("replay speed"), &speed, 0.05f, 5.0f, "%.2fx"))
      commands.push(CommandKind::set_speed, speed);
  }
  ImGui::Text("%s: %s", tr("status"), tr(c.status.c_str()));
}

// The network of the next run: latency, bandwidth, jitter, loss of every link.
bool link_editor(sim::LinkSpec& link) {
  bool changed = false;
  float latency_ms = static_cast<float>(link.latency_s * 1e3);
  // Shown in the unit that suits it ("5 us", "2.00 ms"), as the time slider shows time.
  if (ImGui::SliderFloat(tr("latency"), &latency_ms, 0.0f, 100.0f,
                         format_seconds(link.latency_s).c_str(), ImGuiSliderFlags_Logarithmic)) {
    link.latency_s = latency_ms * 1e-3;
    changed = true;
  }
  const double bandwidths[] = {0, 1.25e6, 12.5e6, 125e6, 1.25e9};
  int bw =
      static_cast<int>(std::find(std::begin(bandwidths), std::end(bandwidths), link.bandwidth_Bps) -
                       std::begin(bandwidths));
  if (bw >= 5) bw = 3;
  if (ImGui::Combo(tr("bandwidth"), &bw,
                   "unlimited\0"
                   "10 Mbit/s\0"
                   "100 Mbit/s\0"
                   "1 Gbit/s\0"
                   "10 Gbit/s\0")) {
    link.bandwidth_Bps = bandwidths[bw];
    changed = true;
  }
  float jitter_ms = static_cast<float>(link.jitter_s * 1e3);
  if (ImGui::SliderFloat(tr("jitter"), &jitter_ms, 0.0f, 20.0f,
                         format_seconds(link.jitter_s).c_str())) {
    link.jitter_s = jitter_ms * 1e-3;
    changed = true;
  }
  float loss = static_cast<float>(link.loss * 100);
  if (ImGui::SliderFloat(tr("packet loss"), &loss, 0.0f, 10.0f, "%.1f %%")) {
    link.loss = loss / 100;
    changed = true;
  }
  return changed;
}

// What the next run trains: model, learning rate, batch, steps.
bool training_editor(sim::RunSpec& run) {
  bool changed = false;
  // A few models to pick; the one the run has (a flag's or a trace's) shows even when it is
  // not among them.
  if (ImGui::BeginCombo(tr("model"), run.model.c_str())) {
    const bool images = run.data.starts_with("fashion-mnist") || run.data.starts_with("idx:");
    for (const char* m : {"softmax", "mlp:32", "mlp:64", "mlp:128,64", "mlp:256", "cnn:lenet"})
      if ((images || m != std::string_view("cnn:lenet")) && ImGui::Selectable(m, run.model == m)) {
        run.model = m;
        changed = true;
      }
    ImGui::EndCombo();
  }
  ImGui::Text("%s: %s", tr("dataset"), run.data.c_str());
  changed |=
      ImGui::SliderFloat(tr("lr"), &run.sgd.lr, 0.001f, 1.0f, "%.3f", ImGuiSliderFlags_Logarithmic);
  int batch = static_cast<int>(run.batch), steps = static_cast<int>(run.steps);
  if (ImGui::SliderInt(tr("batch"), &batch, 16, 1024)) {
    run.batch = batch;
    changed = true;
  }
  if (ImGui::SliderInt(tr("steps"), &steps, 1, 2000)) {
    run.steps = steps;
    run.epochs = 0;
    changed = true;
  }
  return changed;
}

// The step at which rank r crashes in the next run.
bool crash_step_editor(sim::RunSpec& run, int r, int64_t crash) {
  ImGui::SameLine();
  int step = static_cast<int>(crash);
  ImGui::SetNextItemWidth(ImGui::CalcTextSize("00000").x + 2 * ImGui::GetFrameHeight());
  if (!ImGui::InputInt(tr("at step"), &step)) return false;
  set_crash_step(run, r, std::max(1, step));
  return true;
}

// A combo of translated choices; whether the user picked one.
bool choice(const char* label, int& value, std::initializer_list<const char*> english) {
  std::vector<const char*> items;
  for (const char* e : english)
    items.push_back(tr(e));
  return ImGui::Combo(label, &value, items.data(), static_cast<int>(items.size()));
}

// Faults, per rank: a straggler (3x slower) or a crash a few steps into the next run.
bool fault_editor(sim::RunSpec& run, int64_t step_now) {
  bool changed = false;
  ImGui::TextUnformatted(tr("faults"));
  // Every rank; past eight, in a region of their own that scrolls.
  const int ranks = run.cluster.nodes;
  const float row_h = ImGui::GetFrameHeightWithSpacing();
  const bool scroll = ranks > 8;
  if (scroll) ImGui::BeginChild("faults", ImVec2(0, 8.5f * row_h), true);
  // The buttons in one column, after the widest rank label.
  const float label_w =
      ImGui::CalcTextSize(fmt::format(fmt::runtime(tr("rank {}")), ranks - 1).c_str()).x +
      ImGui::GetStyle().ItemSpacing.x;
  for (int r = 0; r < ranks; ++r) {
    ImGui::PushID(r);
    const bool slow = straggler_of(run, r) != 1.0;
    const std::optional<int64_t> crash = crash_step_of(run, r);
    const float x = ImGui::GetCursorPosX();
    ImGui::TextUnformatted(fmt::format(fmt::runtime(tr("rank {}")), r).c_str());
    ImGui::SameLine(x + label_w);
    if (ImGui::SmallButton(tr(slow ? "straggler x3 [on]" : "straggler x3"))) {
      set_straggler(run, r, slow ? 1.0 : 3.0);
      changed = true;
    }
    ImGui::SameLine();
    if (ImGui::SmallButton(tr(crash ? "crash [on]" : "crash"))) {
      set_crash_step(run, r,
                     crash ? std::nullopt : std::optional(std::max<int64_t>(2, step_now + 10)));
      changed = true;
    }
    if (crash) changed |= crash_step_editor(run, r, *crash);
    ImGui::PopID();
  }
  if (scroll) ImGui::EndChild();
  return changed;
}

// Edits of the next run's settings live in ViewSettings::draft until "Restart".
// A classroom's training run: whether the others go on when a laptop leaves (Horovod's
// elastic, in-process), which also lets students who join later into the run.
bool elastic_choice(sim::RunSpec& run) {
  bool elastic = run.elastic.policy == sim::ElasticPolicy::in_process;
  if (!ImGui::Checkbox(tr("go on when a laptop leaves (elastic)"), &elastic)) return false;
  run.elastic.policy = elastic ? sim::ElasticPolicy::in_process : sim::ElasticPolicy::none;
  return true;
}

void settings_editor(const Snapshot& s, Commands& commands) {
  ViewSettings v = s.view;
  SimSettings& d = v.draft;
  bool changed = false;
  const bool classroom = s.classroom.active;  // the laptops are the nodes, training their run
  ImGui::TextDisabled("%s", tr(classroom ? "these apply at Start:" : "these apply at Restart:"));
  int mode = d.mode == RunMode::train ? 0 : 1;
  if (!classroom &&
      choice(tr("mode"), mode, {to_string(RunMode::train), to_string(RunMode::allreduce_demo)})) {
    d.mode = mode == 0 ? RunMode::train : RunMode::allreduce_demo;
    changed = true;
  }
  if (!classroom) changed |= ImGui::SliderInt(tr("nodes"), &d.run.cluster.nodes, 1, 32);
  const Algorithm algorithms[] = {Algorithm::ring,
                                  Algorithm::naive,
                                  Algorithm::tree,
                                  Algorithm::halving_doubling,
                                  Algorithm::recursive_doubling,
                                  Algorithm::automatic};
  int alg =
      static_cast<int>(std::find(std::begin(algorithms), std::end(algorithms), d.run.allreduce) -
                       std::begin(algorithms));
  if (ImGui::Combo(tr("algorithm"), &alg,
                   "ring\0naive\0tree\0halving_doubling\0recursive_doubling\0auto\0")) {
    d.run.allreduce = algorithms[alg];
    changed = true;
  }
  changed |= training_editor(d.run);
  if (classroom) changed |= elastic_choice(d.run);
  if (!classroom) changed |= fault_editor(d.run, s.controls.step);
  if (!classroom && ImGui::Button(tr("Restart with these settings"), ImVec2(-1, 0)))
    commands.push(Command{.kind = CommandKind::restart, .settings = d});
  ImGui::Separator();
  if (!classroom) ImGui::TextDisabled("%s", tr("the network applies now:"));
  if (link_editor(d.run.cluster.network.link)) {
    changed = true;
    if (!classroom) commands.push(Command{.kind = CommandKind::set_link, .settings = d});
  }
  if (changed) commands.push(Command{.kind = CommandKind::set_view, .view = v});
}

// How the window looks: the ranks' layout, theme, UI scale, language; and "Reset layout",
// which puts every window back in its tile.
void view_options(const Snapshot& s, Commands& commands) {
  ViewSettings v = s.view;
  bool changed = false;
  int layout = static_cast<int>(v.layout);
  if (choice(tr("layout"), layout, {"auto", "ring", "star", "grid"})) {
    v.layout = static_cast<Layout>(layout);
    changed = true;
  }
  int theme = static_cast<int>(v.theme);
  if (choice(tr("theme"), theme, {"dark", "light", "projector"})) {
    v.theme = static_cast<Theme>(theme);
    if (v.theme == Theme::projector && v.ui_scale < 1.5f) v.ui_scale = kProjectorScale;
    changed = true;
  }
  changed |= ImGui::SliderFloat(tr("UI scale"), &v.ui_scale, 0.75f, 2.5f, "%.2f");
  if (ImGui::Checkbox("中文 (Chinese)", &v.chinese)) {
    v.lesson_zh = v.chinese;  // the lesson picker follows; its own choice can differ after
    changed = true;
  }
  if (ImGui::Button(tr("Reset layout"))) {
    ++v.layout_resets;
    changed = true;
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tr("every window back in its place"));
  if (changed) commands.push(Command{.kind = CommandKind::set_view, .view = v});
}

}  // namespace

void draw_controls(const Snapshot& s, Commands& commands) {
  // Sliders and combos as wide as 9 letters, whatever the window's width: the column is as
  // wide as its rows need (window_tiling.h), so a row must not grow with it.
  ImGui::PushItemWidth(9 * ImGui::GetFontSize());
  if (!s.title.empty()) ImGui::TextWrapped("%s", s.title.c_str());
  if (!s.error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.9f, 0.1f, 0.1f, 1));
    ImGui::TextWrapped("error: %s", s.error.c_str());
    ImGui::PopStyleColor();
  }
  if (s.classroom.active) {
    draw_classroom(s, commands);
    if (s.controls.watching) ImGui::Text("%s: %s", tr("status"), tr(s.controls.status.c_str()));
  } else {
    run_controls(s, commands);
    speed_presets(s, commands);
    bookmark_list(s, commands);
  }
  if (s.view.selected_message >= 0 &&
      s.view.selected_message < static_cast<int>(s.messages.size())) {
    const MessageView& m = s.messages[s.view.selected_message];
    ImGui::Text("%s: %d -> %d, %s, %s", tr("selected"), m.src, m.dst, m.op,
                format_bytes(static_cast<double>(m.bytes)).c_str());
    ImGui::SameLine();
    if (ImGui::SmallButton(tr("clear")))
      commands.push(Command{.kind = CommandKind::select_message, .index = -1});
  }
  if (!s.classroom.active &&
      ImGui::CollapsingHeader(tr("Lessons"), s.lesson.active ? ImGuiTreeNodeFlags_None
                                                             : ImGuiTreeNodeFlags_DefaultOpen))
    draw_lesson_picker(s, commands);
  if (ImGui::CollapsingHeader(
          tr(s.classroom.active ? "The laptops' training run" : "Simulation"),
          s.lesson.active ? ImGuiTreeNodeFlags_None : ImGuiTreeNodeFlags_DefaultOpen))
    settings_editor(s, commands);
  if (ImGui::CollapsingHeader(tr("View"), ImGuiTreeNodeFlags_DefaultOpen)) {
    view_options(s, commands);
    export_buttons(s, commands);
  }
  ImGui::PopItemWidth();
}

void draw_view(View view, const Snapshot& s, Commands& commands, ViewState& state) {
  switch (view) {
    case View::controls:
      return draw_controls(s, commands);
    case View::topology:
      return draw_topology(s, commands, state.topology);
    case View::convergence:
      return draw_convergence(s, commands);
    case View::gradients:
      return draw_gradients(s, commands);
    case View::timeline:
      return draw_timeline(s, commands);
    case View::lesson:
      return draw_lesson(s, commands);
    case View::messages:
      return draw_messages(s, commands, state.messages);
    case View::time:
      return draw_time_breakdown(s, commands);
    case View::all:
      return;
  }
}

void draw_dashboard(const Snapshot& s, Commands& commands, View only, bool fixed,
                    ViewState& state) {
  set_ui_chinese(s.view.chinese);
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  const bool lesson = s.lesson.active;
  const bool demo = s.controls.live && s.controls.settings.mode == RunMode::allreduce_demo;
  begin_tiling(state.tiling,
               {.width = display.x,
                .height = display.y,
                .font_px = ImGui::GetFontSize(),
                .only = only,
                .lesson = lesson,
                .demo = demo,
                .chinese = s.view.chinese,
                .resets = s.view.layout_resets,
                .theme = s.view.theme},
               fixed);
  // The views draw on their windows' background, one fill per pixel: software renderers
  // (Mesa llvmpipe under Xvfb) are fill-bound. While the windows tile the display as laid
  // out (always when headless), they draw none: the frame is cleared to the same colour
  // first, which saves shading every pixel once more (half the pixels of a 1280x720 frame
  // in the bench, 0.8 to 2.4 ms). Once one is moved or resized, they draw it again, so that
  // a window over another hides what lies under it.
  ImVec4 background = ImGui::ColorConvertU32ToFloat4(palette_for(s.view.theme).background);
  if (state.tiled) background.w = 0;
  ImGui::PushStyleColor(ImGuiCol_WindowBg, background);
  bool all_tiled = true;
  state.windows.clear();
  const std::vector<View> views = dashboard_views(only, lesson, demo);
  for (size_t i = 0; i < views.size(); ++i) {
    const View view = views[i];
    place_window(state.tiling, view);
    ImGuiWindowFlags flags = ImGuiWindowFlags_NoCollapse;
    if (only != View::all) flags |= ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize;
    const bool tabs = only == View::all && view == View::timeline;
    const std::string title = tabs ? bottom_window_title(s) : view_title(view, s.view.chinese);
    const bool open = ImGui::Begin(title.c_str(), nullptr, flags);
    const ImVec2 at = ImGui::GetWindowPos(), size = ImGui::GetWindowSize();
    remember_window(tabs ? s.view.bottom : view, at, size, state.windows);  // the tab shown
    const Rect& r = state.tiling.rects[i];
    // ImGui rounds a window's position and size down to whole pixels: within 2 of the
    // layout's rectangle is in place.
    all_tiled = all_tiled && std::abs(at.x - r.x0) < 2 && std::abs(at.y - r.y0) < 2 &&
                std::abs(at.x + size.x - r.x1) < 2 && std::abs(at.y + size.y - r.y1) < 2;
    if (open && tabs)
      draw_bottom_tabs(s, commands, state);
    else if (open)
      draw_view(view, s, commands, state);
    measure_window(state.tiling, view);
    ImGui::End();
  }
  ImGui::PopStyleColor();
  state.tiled = all_tiled;
  if (only != View::controls) draw_error_banner(s, commands, display);
}

}  // namespace dsgd::gui
