// The presenter's pace: speed presets beside the speed slider (0.01x to watch one message
// cross a link, 10x to get through a run), and a replay's bookmarks (B, or "Bookmark", marks
// the time cursor; a click on one jumps back there and holds the replay).
#include <cmath>
#include <iterator>

#include <fmt/format.h>
#include <imgui.h>

#include "gui/model/replay_marks.h"
#include "gui/views/views.h"

namespace dsgd::gui {
namespace {

constexpr double kSpeedPresets[] = {0.01, 0.1, 1, 10};

// Whether `speed` is the preset (within 1 %: the slider rounds).
bool at_preset(double speed, double preset) {
  return std::abs(speed / preset - 1) < 0.01;
}

}  // namespace

void speed_presets(const Snapshot& s, Commands& commands) {
  if (!s.controls.live && s.world == 0) return;
  for (double preset : kSpeedPresets) {
    const bool active = at_preset(s.controls.speed, preset);
    if (active)
      ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyleColorVec4(ImGuiCol_ButtonActive));
    if (ImGui::Button(fmt::format("{:g}x", preset).c_str()))
      commands.push(CommandKind::set_speed, preset);
    if (active) ImGui::PopStyleColor();
    if (preset != kSpeedPresets[std::size(kSpeedPresets) - 1]) ImGui::SameLine();
  }
}

void bookmark_list(const Snapshot& s, Commands& commands) {
  if (s.controls.live || s.world == 0) return;
  if (ImGui::Button(tr("Bookmark (B)"))) commands.push(add_bookmark(s, s.now_s));
  const std::vector<double>& marks = s.view.bookmarks;
  for (size_t i = 0; i < marks.size(); ++i) {
    ImGui::PushID(static_cast<int>(i));
    ImGui::SameLine();
    if (ImGui::GetContentRegionAvail().x < ImGui::CalcTextSize("00.000 ms x").x * 1.5f)
      ImGui::NewLine();
    if (ImGui::Button(format_seconds(marks[i]).c_str())) {
      commands.push(CommandKind::pause);
      commands.push(CommandKind::seek, marks[i]);
    }
    if (ImGui::BeginPopupContextItem()) {
      if (ImGui::MenuItem(tr("Remove"))) commands.push(remove_bookmark(s, i));
      ImGui::EndPopup();
    }
    ImGui::PopID();
  }
}

}  // namespace dsgd::gui
