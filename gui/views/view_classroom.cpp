// The classroom panel (dsgd-gui --classroom), at the top of the controls: the command a
// student types, who has joined and how their last run went, and the button that starts the
// next run on every laptop waiting. Readable from the back row: the token and the names in
// the window's text size, a row per student.
#include <algorithm>
#include <string>

#include <fmt/format.h>
#include <imgui.h>

#include "gui/model/ui_text.h"
#include "gui/views/theme.h"
#include "gui/views/views.h"

namespace dsgd::gui {
namespace {

void student_table(const ClassroomState& c) {
  if (c.students.empty()) {
    ImGui::TextDisabled("%s", tr("nobody has joined yet"));
    return;
  }
  const ImGuiTableFlags flags =
      ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("students", 3, flags)) return;
  ImGui::TableSetupColumn("#");
  ImGui::TableSetupColumn(tr("student"));
  ImGui::TableSetupColumn(tr("state"), ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableHeadersRow();
  for (const Student& st : c.students) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::Text("%d", st.seat);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(st.name.c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", st.address.c_str());
    ImGui::TableNextColumn();
    const bool failed = st.here && !st.running && st.run > 0 && st.outcome != "finished";
    if (!st.here || failed) ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.95f, 0.35f, 0.3f, 1));
    ImGui::TextWrapped("%s", student_state(st).c_str());
    if (!st.here || failed) ImGui::PopStyleColor();
  }
  ImGui::EndTable();
}

// The join command, broken only between words: an address or a token cut in two would be
// misread from the back of the room.
void words_wrapped(const std::string& text) {
  const float width = ImGui::GetContentRegionAvail().x;
  const float space = ImGui::CalcTextSize(" ").x;
  float used = 0;
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find(' ', at), text.size());
    const std::string word = text.substr(at, end - at);
    const float w = ImGui::CalcTextSize(word.c_str()).x;
    if (used > 0 && used + space + w <= width)
      ImGui::SameLine(0, space);
    else
      used = 0;
    ImGui::TextUnformatted(word.c_str());
    used += (used > 0 ? space : 0) + w;
    at = end + 1;
  }
}

}  // namespace

void draw_classroom(const Snapshot& s, Commands& commands) {
  const ClassroomView& v = s.classroom;
  const ClassroomState& c = v.state;
  ImGui::TextWrapped("%s", tr("Students join with:"));
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_CheckMark));
  words_wrapped(v.join_command);
  ImGui::PopStyleColor();
  student_table(c);
  const int waiting = c.waiting();
  ImGui::BeginDisabled(waiting == 0 || c.running());
  const std::string start =
      fmt::format(fmt::runtime(tr("Start training on {}###start_class")), laptops(waiting));
  if (ImGui::Button(start.c_str(), ImVec2(-1, 0)))
    commands.push(
        Command{.kind = CommandKind::start_class_run, .flag = s.view.chinese, .index = 0});
  ImGui::EndDisabled();
  if (c.elastic && c.running() && waiting > 0) {  // students who came late join the run
    const std::string add = fmt::format(fmt::runtime(tr("Add {} to run {}###add_to_class_run")),
                                        laptops(waiting), c.run);
    if (ImGui::Button(add.c_str(), ImVec2(-1, 0))) commands.push(CommandKind::add_to_class_run);
  }
  draw_lesson_picker(s, commands);  // its button starts the lesson on the laptops
  if (c.run > 0)
    ImGui::Text(
        "%s",
        fmt::format(fmt::runtime(tr(c.running() ? "run {}: {}, running" : "run {}: {}, ended")),
                    c.run, laptops(c.world))
            .c_str());
  if (c.refused > 0)
    ImGui::TextDisabled(
        "%s", fmt::format(fmt::runtime(tr("{} refused (latest: {})")), c.refused, c.last_refusal)
                  .c_str());
}

}  // namespace dsgd::gui
