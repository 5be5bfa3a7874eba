// The message log: every message of the snapshot as a row (when it left, how long it took,
// whether it was lost or resent on the way, or that it is still in flight, from -> to, its tag,
// where it stands in its collective, bytes, first values), thousands of them through ImGui's list
// clipper, so that a frame lays out only the rows in sight. In sync with the selection: a click on
// a row selects its message in every view, and a message selected elsewhere is highlighted and
// scrolled into sight. While the log is scrolled to its end it follows the newest message.
#include <algorithm>
#include <string>

#include <fmt/format.h>
#include <imgui.h>

#include "gui/model/message_text.h"
#include "gui/views/theme.h"
#include "gui/views/views.h"

namespace dsgd::gui {
namespace {

enum Column { kIndex, kSent, kTook, kRoute, kTag, kPhase, kBytes, kValues, kColumns };

// Fixed widths from the font (the clipper lays out only some rows, so fitting the columns to
// their contents would make them jump while scrolling).
void setup_columns() {
  // A column as wide as its header or its widest sample, whichever is wider.
  const auto column = [](const char* header, const char* sample, const char* other = "") {
    const float w = std::max({ImGui::CalcTextSize(header).x, ImGui::CalcTextSize(sample).x,
                              ImGui::CalcTextSize(other).x});
    ImGui::TableSetupColumn(header, ImGuiTableColumnFlags_WidthFixed, w);
  };
  ImGui::TableSetupScrollFreeze(0, 1);
  column("#", "000000");
  column(tr("sent (ms)"), "00000.000");
  column(tr("took"), fmt::format("{}, {}", tr("in flight"), tr("resent {}x")).c_str(),
         "000.0 ms, resent 9x");
  column(tr("from -> to"), "00 -> 00");
  column(tr("tag"), "MMM all_reduce recursive_doubling");  // the square, then the label
  column(tr("phase"), "reduce-scatter 31/31, chunk 31");
  column(tr("bytes"), "000 kB");
  ImGui::TableSetupColumn(tr("first values"), ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableHeadersRow();
}

// Text in the red the topology marks resent messages and links down with.
ImVec4 fault_text_colour(const Snapshot& s) {
  return ImGui::ColorConvertU32ToFloat4(palette_for(s.view.theme).link_slow);
}

// A square in the colour the topology and the timeline give the message's collective.
void colour_square(const MessageView& m) {
  const float side = ImGui::GetTextLineHeight() * 0.7f;
  const ImVec2 at = ImGui::GetCursorScreenPos();
  const float inset = (ImGui::GetTextLineHeight() - side) / 2;
  ImGui::GetWindowDrawList()->AddRectFilled(
      {at.x, at.y + inset}, {at.x + side, at.y + inset + side}, colour_for_op(m.op));
  ImGui::Dummy({side, ImGui::GetTextLineHeight()});
  ImGui::SameLine();
}

// The first values, as many as the column has room for ("0.25, -1.5, ...").
void values_cell(const MessageView& m) {
  std::string text = preview_text(m);
  const float room = ImGui::GetContentRegionAvail().x;
  while (ImGui::CalcTextSize(text.c_str()).x > room) {
    const size_t comma = text.rfind(", ", text.size() - (text.ends_with(", ...") ? 6 : 1));
    if (comma == std::string::npos || comma == 0) break;
    text = text.substr(0, comma) + ", ...";
  }
  ImGui::TextUnformatted(text.c_str());
}

// One row; a click selects its message. Scrolls it into sight when `reveal` and it is not.
void message_row(const Snapshot& s, int i, bool reveal, Commands& commands) {
  const MessageView& m = s.messages[i];
  const bool selected = i == s.view.selected_message;
  ImGui::TableNextRow();
  ImGui::TableSetColumnIndex(kIndex);
  ImGui::PushID(i);
  if (ImGui::Selectable(fmt::format("{}", i).c_str(), selected,
                        ImGuiSelectableFlags_SpanAllColumns))
    commands.push(Command{.kind = CommandKind::select_message, .index = i});
  ImGui::PopID();
  if (selected && reveal && !ImGui::IsItemVisible()) ImGui::SetScrollHereY(0.5f);
  ImGui::TableSetColumnIndex(kSent);
  ImGui::Text("%.3f", m.send_s * 1e3);
  ImGui::TableSetColumnIndex(kTook);
  const bool trouble = m.lost || m.retransmits > 0;  // in the colour of faults
  if (trouble) ImGui::PushStyleColor(ImGuiCol_Text, fault_text_colour(s));
  ImGui::TextUnformatted(took_text(m).c_str());
  if (trouble) ImGui::PopStyleColor();
  ImGui::TableSetColumnIndex(kRoute);
  ImGui::Text("%d -> %d", m.src, m.dst);
  ImGui::TableSetColumnIndex(kTag);
  colour_square(m);
  ImGui::TextUnformatted(tag_column_text(m).c_str());
  ImGui::TableSetColumnIndex(kPhase);
  ImGui::TextUnformatted(phase_and_chunk_text(m, s.world).c_str());
  ImGui::TableSetColumnIndex(kBytes);
  ImGui::TextUnformatted(format_bytes(static_cast<double>(m.bytes)).c_str());
  ImGui::TableSetColumnIndex(kValues);
  values_cell(m);
}

}  // namespace

void draw_messages(const Snapshot& s, Commands& commands, MessageLogState& state) {
  const int count = static_cast<int>(s.messages.size());
  ImGui::Text("%d %s, %d %s", count, tr("messages"), static_cast<int>(s.in_flight.size()),
              tr("in flight"));
  ImGui::SameLine();
  ImGui::TextDisabled("%s", tr("(click a row to select its message)"));
  const int selected = s.view.selected_message < count ? s.view.selected_message : -1;
  const bool reveal = selected >= 0 && selected != state.scrolled_to;
  state.scrolled_to = selected;
  constexpr ImGuiTableFlags kFlags = ImGuiTableFlags_ScrollY | ImGuiTableFlags_RowBg |
                                     ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_Resizable |
                                     ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("message_log", kColumns, kFlags, ImGui::GetContentRegionAvail())) return;
  setup_columns();
  // Following the newest: the log was at its end in the last frame (ImGui's console idiom).
  const bool follow = !reveal && ImGui::GetScrollY() >= ImGui::GetScrollMaxY();
  ImGuiListClipper clipper;
  clipper.Begin(count);
  if (reveal) clipper.ForceDisplayRangeByIndices(selected, selected + 1);
  while (clipper.Step())
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i)
      message_row(s, i, reveal, commands);
  if (follow) ImGui::SetScrollHereY(1.0f);
  ImGui::EndTable();
}

}  // namespace dsgd::gui
