// The controls panel (play, pause, step a message or a training step, speed; the settings
// of the next run and restart; faults; view options; the replay's scrubber) and the
// dashboard that places one window per view.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <imgui.h>

#include "gui/model/shortcuts.h"
#include "gui/views/theme.h"
#include "gui/views/views.h"

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
  ImGui::Begin(s.error_is_fault ? "The run ended by a fault (Esc closes this)###error"
                                : "Error (Esc closes this)###error",
               &open, ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoResize);
  ImGui::TextWrapped("%s", s.error.c_str());
  ImGui::End();
  ImGui::PopStyleColor(2);
  if (!open) commands.push(dismiss_error(s));
}

void run_controls(const Snapshot& s, Commands& commands) {
  const ControlState& c = s.controls;
  if (ImGui::Button(c.paused || c.step_mode ? "Play" : "Pause"))
    commands.push(c.paused || c.step_mode ? CommandKind::play : CommandKind::pause);
  if (c.live) {
    ImGui::SameLine();
    if (ImGui::Button("Step message")) commands.push(CommandKind::step_message);
    if (!s.lesson.active && ImGui::Button("Step training step"))
      commands.push(CommandKind::step_training);
    bool step_mode = c.step_mode;
    if (ImGui::Checkbox("step mode (hold every message)", &step_mode))
      commands.push(Command{.kind = CommandKind::set_step_mode, .flag = step_mode});
    float log_speed = static_cast<float>(std::log10(std::max(0.001, c.speed)));
    if (ImGui::SliderFloat("speed", &log_speed, -3.0f, 1.0f,
                           fmt::format("{:.3g}x", std::pow(10.0, log_speed)).c_str()))
      commands.push(CommandKind::set_speed, std::pow(10.0, log_speed));
    if (c.total_steps > 0) {
      const float f = static_cast<float>(c.step) / static_cast<float>(c.total_steps);
      ImGui::ProgressBar(
          std::min(1.0f, f), ImVec2(-1, 0),
          fmt::format("{} {} / {}", c.settings.mode == RunMode::train ? "step" : "round", c.step,
                      c.total_steps)
              .c_str());
    }
  } else if (s.world > 0) {
    float t = static_cast<float>(s.now_s);
    if (ImGui::SliderFloat("time", &t, static_cast<float>(s.begin_s), static_cast<float>(s.end_s),
                           format_seconds(s.now_s).c_str()))
      commands.push(CommandKind::seek, t);
    float speed = static_cast<float>(c.speed);
    if (ImGui::SliderFloat("replay speed", &speed, 0.05f, 5.0f, "%.2fx"))
      commands.push(CommandKind::set_speed, speed);
  }
  ImGui::Text("%s: %s", tr("status"), tr(c.status.c_str()));
}

// The network of the next run: latency, bandwidth, jitter, loss of every link.
bool link_editor(sim::LinkSpec& link) {
  bool changed = false;
  float latency_ms = static_cast<float>(link.latency_s * 1e3);
  if (ImGui::SliderFloat("latency", &latency_ms, 0.0f, 100.0f, "%.2f ms",
                         ImGuiSliderFlags_Logarithmic)) {
    link.latency_s = latency_ms * 1e-3;
    changed = true;
  }
  const double bandwidths[] = {0, 1.25e6, 12.5e6, 125e6, 1.25e9};
  int bw =
      static_cast<int>(std::find(std::begin(bandwidths), std::end(bandwidths), link.bandwidth_Bps) -
                       std::begin(bandwidths));
  if (bw >= 5) bw = 3;
  if (ImGui::Combo("bandwidth", &bw,
                   "unlimited\0"
                   "10 Mbit/s\0"
                   "100 Mbit/s\0"
                   "1 Gbit/s\0"
                   "10 Gbit/s\0")) {
    link.bandwidth_Bps = bandwidths[bw];
    changed = true;
  }
  float jitter_ms = static_cast<float>(link.jitter_s * 1e3);
  if (ImGui::SliderFloat("jitter", &jitter_ms, 0.0f, 20.0f, "%.2f ms")) {
    link.jitter_s = jitter_ms * 1e-3;
    changed = true;
  }
  float loss = static_cast<float>(link.loss * 100);
  if (ImGui::SliderFloat("loss", &loss, 0.0f, 10.0f, "%.1f %%")) {
    link.loss = loss / 100;
    changed = true;
  }
  return changed;
}

// What the next run trains: model, learning rate, batch, steps.
bool training_editor(sim::RunSpec& run) {
  bool changed = false;
  const char* models[] = {"softmax", "mlp:32", "mlp:64", "mlp:128,64"};
  int model = static_cast<int>(std::find_if(std::begin(models), std::end(models),
                                            [&](const char* m) { return run.model == m; }) -
                               std::begin(models));
  if (ImGui::Combo("model", &model, models, 4) && model < 4) {
    run.model = models[model];
    changed = true;
  }
  ImGui::Text("dataset: %s", run.data.c_str());
  changed |=
      ImGui::SliderFloat("lr", &run.sgd.lr, 0.001f, 1.0f, "%.3f", ImGuiSliderFlags_Logarithmic);
  int batch = static_cast<int>(run.batch), steps = static_cast<int>(run.steps);
  if (ImGui::SliderInt("batch", &batch, 16, 1024)) {
    run.batch = batch;
    changed = true;
  }
  if (ImGui::SliderInt("steps", &steps, 1, 2000)) {
    run.steps = steps;
    run.epochs = 0;
    changed = true;
  }
  return changed;
}

// Faults, per rank: a straggler (3x slower) or a crash a few steps into the next run.
bool fault_editor(sim::RunSpec& run, int64_t step_now) {
  bool changed = false;
  ImGui::Separator();
  ImGui::TextUnformatted("faults (next run)");
  for (int r = 0; r < std::min(run.cluster.nodes, 16); ++r) {
    ImGui::PushID(r);
    const bool slow = straggler_of(run, r) != 1.0;
    const std::optional<int64_t> crash = crash_step_of(run, r);
    ImGui::Text("rank %2d", r);
    ImGui::SameLine();
    if (ImGui::SmallButton(slow ? "straggler x3 [on]" : "straggler x3")) {
      set_straggler(run, r, slow ? 1.0 : 3.0);
      changed = true;
    }
    ImGui::SameLine();
    if (ImGui::SmallButton(crash ? "crash [on]" : "crash")) {
      set_crash_step(run, r,
                     crash ? std::nullopt : std::optional(std::max<int64_t>(2, step_now + 10)));
      changed = true;
    }
    if (crash) {
      ImGui::SameLine();
      ImGui::Text("at step %lld", static_cast<long long>(*crash));
    }
    ImGui::PopID();
  }
  return changed;
}

// Edits of the next run's settings live in ViewSettings::draft until "Restart".
void settings_editor(const Snapshot& s, Commands& commands) {
  ViewSettings v = s.view;
  SimSettings& d = v.draft;
  bool changed = false;
  int mode = d.mode == RunMode::train ? 0 : 1;
  if (ImGui::Combo("mode", &mode, "training\0all_reduce demo\0")) {
    d.mode = mode == 0 ? RunMode::train : RunMode::allreduce_demo;
    changed = true;
  }
  changed |= ImGui::SliderInt("nodes", &d.run.cluster.nodes, 1, 32);
  const Algorithm algorithms[] = {Algorithm::ring, Algorithm::naive, Algorithm::tree,
                                  Algorithm::halving_doubling, Algorithm::automatic};
  int alg =
      static_cast<int>(std::find(std::begin(algorithms), std::end(algorithms), d.run.allreduce) -
                       std::begin(algorithms));
  if (ImGui::Combo("algorithm", &alg, "ring\0naive\0tree\0halving_doubling\0auto\0")) {
    d.run.allreduce = algorithms[alg];
    changed = true;
  }
  changed |= link_editor(d.run.cluster.network.link);
  changed |= training_editor(d.run);
  changed |= fault_editor(d.run, s.controls.step);
  if (changed) commands.push(Command{.kind = CommandKind::set_view, .view = v});
  if (ImGui::Button("Restart with these settings", ImVec2(-1, 0)))
    commands.push(Command{.kind = CommandKind::restart, .settings = d});
}

void view_options(const Snapshot& s, Commands& commands) {
  ViewSettings v = s.view;
  bool changed = false;
  int layout = static_cast<int>(v.layout);
  if (ImGui::Combo("layout", &layout, "auto\0ring\0star\0grid\0")) {
    v.layout = static_cast<Layout>(layout);
    changed = true;
  }
  int theme = static_cast<int>(v.theme);
  if (ImGui::Combo("theme", &theme, "dark\0light\0projector\0")) {
    v.theme = static_cast<Theme>(theme);
    if (v.theme == Theme::projector && v.ui_scale < 1.5f) v.ui_scale = 1.75f;
    changed = true;
  }
  changed |= ImGui::SliderFloat("UI scale", &v.ui_scale, 0.75f, 2.5f, "%.2f");
  changed |= ImGui::Checkbox("中文 (Chinese)", &v.chinese);
  if (changed) commands.push(Command{.kind = CommandKind::set_view, .view = v});
}

}  // namespace

void draw_controls(const Snapshot& s, Commands& commands) {
  if (!s.title.empty()) ImGui::TextWrapped("%s", s.title.c_str());
  if (!s.error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.9f, 0.1f, 0.1f, 1));
    ImGui::TextWrapped("error: %s", s.error.c_str());
    ImGui::PopStyleColor();
  }
  run_controls(s, commands);
  speed_presets(s, commands);
  bookmark_list(s, commands);
  if (s.view.selected_message >= 0 &&
      s.view.selected_message < static_cast<int>(s.messages.size())) {
    const MessageView& m = s.messages[s.view.selected_message];
    ImGui::Text("selected: %d -> %d, %s, %s", m.src, m.dst, m.op,
                format_bytes(static_cast<double>(m.bytes)).c_str());
    ImGui::SameLine();
    if (ImGui::SmallButton("clear"))
      commands.push(Command{.kind = CommandKind::select_message, .index = -1});
  }
  if (ImGui::CollapsingHeader(tr("Lessons"), s.lesson.active ? ImGuiTreeNodeFlags_None
                                                             : ImGuiTreeNodeFlags_DefaultOpen))
    draw_lesson_picker(s, commands);
  if (ImGui::CollapsingHeader(tr("Simulation"), s.lesson.active ? ImGuiTreeNodeFlags_None
                                                                : ImGuiTreeNodeFlags_DefaultOpen))
    settings_editor(s, commands);
  if (ImGui::CollapsingHeader(tr("View"), ImGuiTreeNodeFlags_DefaultOpen))
    view_options(s, commands);
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
  const ImGuiCond cond = fixed ? ImGuiCond_Always : ImGuiCond_FirstUseEver;
  const View views[] = {View::controls, View::topology, View::convergence, View::gradients,
                        View::timeline, View::lesson,   View::messages,    View::time};
  const bool lesson = s.lesson.active;
  const bool demo = s.controls.live && s.controls.settings.mode == RunMode::allreduce_demo;
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
  for (View view : views) {
    if (only != View::all && only != view) continue;
    if (only == View::all && (view == View::lesson) != lesson &&
        (view == View::lesson || view == View::convergence || view == View::gradients))
      continue;
    if (only == View::all && demo && !lesson && view == View::convergence) continue;
    if (only == View::all && (view == View::messages || view == View::time)) continue;  // tabs
    const Rect r = view_rect(view, only, display.x, display.y, lesson, demo);
    ImGui::SetNextWindowPos({r.x0, r.y0}, cond);
    ImGui::SetNextWindowSize({r.x1 - r.x0, r.y1 - r.y0}, cond);
    ImGuiWindowFlags flags = ImGuiWindowFlags_NoCollapse;
    if (only != View::all) flags |= ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize;
    const bool tabs = only == View::all && view == View::timeline;
    const std::string title = tabs ? bottom_window_title(s) : view_title(view, s.view.chinese);
    const bool open = ImGui::Begin(title.c_str(), nullptr, flags);
    const ImVec2 at = ImGui::GetWindowPos(), size = ImGui::GetWindowSize();
    // ImGui rounds a window's position and size down to whole pixels: within 2 of the
    // layout's rectangle is in place.
    all_tiled = all_tiled && std::abs(at.x - r.x0) < 2 && std::abs(at.y - r.y0) < 2 &&
                std::abs(at.x + size.x - r.x1) < 2 && std::abs(at.y + size.y - r.y1) < 2;
    if (open && tabs)
      draw_bottom_tabs(s, commands, state);
    else if (open)
      draw_view(view, s, commands, state);
    ImGui::End();
  }
  ImGui::PopStyleColor();
  state.tiled = all_tiled;
  if (only != View::controls) draw_error_banner(s, commands, display);
}

}  // namespace dsgd::gui
