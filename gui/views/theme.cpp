#include "gui/views/theme.h"

#include <filesystem>

#include <imgui.h>

#include "gui/model/contrast.h"
#include "gui/model/tiling.h"
#include "gui/model/ui_text.h"

namespace dsgd::gui {

Palette palette_for(Theme theme) {
  switch (theme) {
    case Theme::light:
      return {.background = rgba(245, 245, 240),
              .panel = rgba(255, 255, 255),
              .text = rgba(20, 20, 20),
              .dim_text = rgba(110, 110, 110),
              .grid = rgba(210, 210, 205),
              .link = rgba(170, 170, 170),
              .link_ring = rgba(90, 90, 90),
              .link_slow = rgba(220, 40, 40),
              .node = rgba(60, 110, 200),
              .node_busy = rgba(230, 170, 0),
              .node_straggler = rgba(240, 120, 0),
              .node_crashed = rgba(120, 120, 120),
              .node_outline = rgba(20, 20, 20),
              .cursor = rgba(220, 0, 0),
              .selection = rgba(0, 0, 0)};
    case Theme::projector:  // black on white, thick and saturated: survives a washed-out beamer
      return {.background = rgba(255, 255, 255),
              .panel = rgba(255, 255, 255),
              .text = rgba(0, 0, 0),
              .dim_text = rgba(40, 40, 40),
              .grid = rgba(160, 160, 160),
              .link = rgba(90, 90, 90),
              .link_ring = rgba(0, 0, 0),
              .link_slow = rgba(230, 0, 0),
              .node = rgba(0, 70, 200),
              .node_busy = rgba(255, 170, 0),
              .node_straggler = rgba(255, 100, 0),
              .node_crashed = rgba(90, 90, 90),
              .node_outline = rgba(0, 0, 0),
              .cursor = rgba(230, 0, 0),
              .selection = rgba(0, 0, 0)};
    case Theme::dark:
      break;
  }
  return {.background = rgba(22, 24, 30),
          .panel = rgba(30, 33, 40),
          .text = rgba(235, 235, 235),
          .dim_text = rgba(150, 150, 160),
          .grid = rgba(60, 64, 74),
          .link = rgba(85, 90, 105),
          .link_ring = rgba(150, 160, 185),
          .link_slow = rgba(255, 70, 70),
          .node = rgba(60, 120, 230),
          .node_busy = rgba(250, 200, 40),
          .node_straggler = rgba(255, 130, 20),
          .node_crashed = rgba(90, 90, 90),
          .node_outline = rgba(230, 230, 230),
          .cursor = rgba(255, 60, 60),
          .selection = rgba(255, 255, 255)};
}

namespace {

Rgba to_rgba(const ImVec4& c) {
  return ImGui::ColorConvertFloat4ToU32(c);
}
ImVec4 to_vec4(Rgba c) {
  return ImGui::ColorConvertU32ToFloat4(c);
}

// The colours ImGui writes text on (buttons, frames, headers, title bars, the progress bar).
constexpr ImGuiCol kTextBackgrounds[] = {ImGuiCol_WindowBg,
                                         ImGuiCol_ChildBg,
                                         ImGuiCol_PopupBg,
                                         ImGuiCol_FrameBg,
                                         ImGuiCol_FrameBgHovered,
                                         ImGuiCol_FrameBgActive,
                                         ImGuiCol_TitleBg,
                                         ImGuiCol_TitleBgActive,
                                         ImGuiCol_TitleBgCollapsed,
                                         ImGuiCol_MenuBarBg,
                                         ImGuiCol_Button,
                                         ImGuiCol_ButtonHovered,
                                         ImGuiCol_ButtonActive,
                                         ImGuiCol_Header,
                                         ImGuiCol_HeaderHovered,
                                         ImGuiCol_HeaderActive,
                                         ImGuiCol_Tab,
                                         ImGuiCol_TabHovered,
                                         ImGuiCol_TabActive,
                                         ImGuiCol_PlotHistogram,
                                         ImGuiCol_PlotHistogramHovered};

// Every background above carries the text at 4.5:1 over the views' background, opaque (a
// washed-out projector loses what contrast a translucent colour had); the check mark and
// the slider's grab stand out from their frame at 3:1, and so do the frames' borders from
// the window.
void make_legible(ImGuiStyle& style, Rgba background) {
  const Rgba text = to_rgba(style.Colors[ImGuiCol_Text]);
  for (ImGuiCol slot : kTextBackgrounds)
    style.Colors[slot] =
        to_vec4(legible_fill(over(to_rgba(style.Colors[slot]), background), text, 4.5));
  const Rgba frame = to_rgba(style.Colors[ImGuiCol_FrameBg]);
  for (ImGuiCol slot : {ImGuiCol_CheckMark, ImGuiCol_SliderGrab, ImGuiCol_SliderGrabActive})
    style.Colors[slot] = to_vec4(legible_fill(over(to_rgba(style.Colors[slot]), frame), frame, 3));
  style.Colors[ImGuiCol_Border] = to_vec4(
      legible_fill(over(to_rgba(style.Colors[ImGuiCol_Border]), background), background, 3));
}

}  // namespace

void apply_theme(Theme theme, float scale) {
  ImGuiStyle style;
  switch (theme) {
    case Theme::dark:
      ImGui::StyleColorsDark(&style);
      break;
    case Theme::light:  // frames grey with a border: white boxes vanish on a white window
      ImGui::StyleColorsLight(&style);
      style.Colors[ImGuiCol_FrameBg] = ImVec4(0.87f, 0.87f, 0.86f, 1);
      style.FrameBorderSize = 1;
      break;
    case Theme::projector:
      ImGui::StyleColorsLight(&style);
      style.Colors[ImGuiCol_Text] = ImVec4(0, 0, 0, 1);
      style.Colors[ImGuiCol_Border] = ImVec4(0, 0, 0, 1);
      style.Colors[ImGuiCol_TitleBg] = ImVec4(0.70f, 0.80f, 1.0f, 1);
      style.Colors[ImGuiCol_TitleBgActive] = ImVec4(0.70f, 0.80f, 1.0f, 1);
      style.Colors[ImGuiCol_Button] = ImVec4(0.85f, 0.88f, 1.0f, 1);
      style.Colors[ImGuiCol_FrameBg] = ImVec4(0.92f, 0.92f, 0.92f, 1);
      style.WindowBorderSize = 2;
      style.FrameBorderSize = 1;
      break;
  }
  make_legible(style, palette_for(theme).background);
  style.WindowRounding = 4;
  style.ScaleAllSizes(scale);
  ImGui::GetStyle() = style;
}

std::string default_cjk_font() {
  for (const char* p : {"/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
                        "/usr/share/fonts/wqy-microhei/wqy-microhei.ttc"})
    if (std::filesystem::exists(p)) return p;
  return "";
}

// Every Chinese character of the window titles (the other labels' are ui_text.h's), some
// of which are outside ImGui's "common" 2500.
constexpr const char* kUiChinese =
    "拓扑收敛时间线梯度平均控制对数按模型全部模拟设置显示中文课程消息去向";

bool load_fonts(const std::string& path, float scale, ImVector<ImWchar>& ranges,
                const std::string& extra_text) {
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  const float size = kFontPx * scale;
  if (!path.empty() && std::filesystem::exists(path)) {
    ImFontGlyphRangesBuilder builder;
    builder.AddRanges(io.Fonts->GetGlyphRangesChineseSimplifiedCommon());
    builder.AddText(kUiChinese);
    builder.AddText(translations_text().c_str());
    builder.AddText(extra_text.c_str());
    ranges.clear();
    builder.BuildRanges(&ranges);
    ImFontConfig config;
    config.OversampleH = 1;  // CJK atlases are large; no horizontal oversampling needed
    if (io.Fonts->AddFontFromFileTTF(path.c_str(), size, &config, ranges.Data)) return true;
  }
  ImFontConfig config;
  config.SizePixels = size;
  io.Fonts->AddFontDefault(&config);
  return false;
}

const char* view_title(View view, bool chinese) {
  switch (view) {
    case View::topology:
      return chinese ? "拓扑 Topology###topology" : "Topology###topology";
    case View::convergence:
      return chinese ? "收敛 Convergence###convergence" : "Convergence###convergence";
    case View::timeline:
      return chinese ? "时间线 Timeline###timeline" : "Timeline###timeline";
    case View::gradients:
      return chinese ? "梯度平均 Gradient averaging###gradients" : "Gradient averaging###gradients";
    case View::controls:
      return chinese ? "控制 Controls###controls" : "Controls###controls";
    case View::lesson:
      return chinese ? "课程 Lesson###lesson" : "Lesson###lesson";
    case View::messages:
      return chinese ? "消息 Messages###messages" : "Messages###messages";
    case View::time:
      return chinese ? "时间去向 Where the time goes###time" : "Where the time goes###time";
    case View::all:
      break;
  }
  return "dsgd";
}

}  // namespace dsgd::gui
