// The timeline's legend, after its zoom bar: the colour of each compute phase (the upper
// lane) and collective (the lower) in view, and how a message, the end of one and the time
// cursor look; and, when messages are too many for lines, that only their ends are drawn.
#include <algorithm>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <imgui.h>

#include "gui/views/legend.h"
#include "gui/views/theme.h"
#include "gui/views/views.h"

namespace dsgd::gui {

void draw_timeline_legend(const Snapshot& s, size_t dense_messages) {
  const Palette pal = palette_for(s.view.theme);
  // The slices' names, compute phases first, each once (a few distinct among thousands).
  std::vector<std::string_view> compute, comm;
  for (const SliceView& sl : s.slices) {
    std::vector<std::string_view>& names = sl.lane == Lane::compute ? compute : comm;
    if (std::find(names.begin(), names.end(), sl.label) == names.end()) names.push_back(sl.label);
  }
  std::vector<LegendEntry> entries;
  const auto add = [&](const char* heading, const std::vector<std::string_view>& names) {
    if (names.empty()) return;
    entries.push_back({Swatch::none, 0, heading});
    for (std::string_view name : names)
      entries.push_back({Swatch::box, colour_for_op(std::string(name).c_str()), std::string(name)});
  };
  add(tr("compute:"), compute);
  add(tr("communication:"), comm);
  entries.push_back({Swatch::line, pal.text, tr("message")});
  entries.push_back({Swatch::tick, pal.link, tr("message ends")});
  entries.push_back({Swatch::line, pal.cursor, tr("now")});
  draw_legend(entries, pal.text, /*same_line=*/true);
  if (dense_messages == 0) return;
  // After the legend where it fits, else wrapped below it: never wider than the window.
  const std::string note =
      fmt::format(fmt::runtime(tr("{} messages: their ends only (zoom in, or hover one, for "
                                  "lines)")),
                  dense_messages);
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(pal.dim_text));
  if (same_line_if_fits(ImGui::CalcTextSize(note.c_str()).x,
                        1.5f * ImGui::GetStyle().ItemSpacing.x))
    ImGui::TextUnformatted(note.c_str());
  else
    ImGui::TextWrapped("%s", note.c_str());
  ImGui::PopStyleColor();
}

}  // namespace dsgd::gui
