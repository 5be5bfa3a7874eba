#include "gui/views/legend.h"

#include <imgui.h>

namespace dsgd::gui {
namespace {

void draw_swatch(ImDrawList* dl, ImVec2 at, float em, Swatch swatch, Rgba colour) {
  const float mid = at.y + em * 0.55f, w = 1.4f * em;
  switch (swatch) {
    case Swatch::line:
      dl->AddLine({at.x, mid}, {at.x + w, mid}, colour, 0.16f * em);
      break;
    case Swatch::dot:
      dl->AddCircleFilled({at.x + w / 2, mid}, 0.25f * em, colour);
      break;
    case Swatch::small_dot:
      dl->AddCircleFilled({at.x + w / 2, mid}, 0.12f * em, colour);
      break;
    case Swatch::box:
      dl->AddRectFilled({at.x, at.y + 0.2f * em}, {at.x + w, at.y + 0.9f * em}, colour);
      break;
    case Swatch::tick:
      dl->AddLine({at.x + w / 2, at.y + 0.1f * em}, {at.x + w / 2, at.y + em}, colour, 0.12f * em);
      break;
    case Swatch::none:
      break;
  }
}

}  // namespace

bool same_line_if_fits(float width_px, float gap_px) {
  const float gap = gap_px >= 0 ? gap_px : ImGui::GetStyle().ItemSpacing.x;
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  if (ImGui::GetItemRectMax().x + gap + width_px > right) return false;
  ImGui::SameLine(0, gap);
  return true;
}

float button_width(const char* label) {
  return ImGui::CalcTextSize(label, nullptr, true).x + 2 * ImGui::GetStyle().FramePadding.x;
}

float check_box_width(const char* label) {
  return ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x +
         ImGui::CalcTextSize(label, nullptr, true).x;
}

void draw_legend(const std::vector<LegendEntry>& entries, Rgba text, bool same_line) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float em = ImGui::GetFontSize();
  const float gap = ImGui::GetStyle().ItemSpacing.x;
  const auto width_of = [&](const LegendEntry& e) {
    return (e.swatch == Swatch::none ? 0 : 1.7f * em) + ImGui::CalcTextSize(e.label.c_str()).x;
  };
  for (size_t i = 0; i < entries.size(); ++i) {
    const LegendEntry& e = entries[i];
    const float swatch_w = e.swatch == Swatch::none ? 0 : 1.7f * em;
    const ImVec2 size{width_of(e), ImGui::GetTextLineHeight()};
    if (i > 0 || same_line) {  // after the item before, where it fits (else a line below)
      const float spacing = (i > 0 ? 1.5f : 3.0f) * gap;
      // A heading stays with its first entry.
      const float need = size.x + (e.swatch == Swatch::none && i + 1 < entries.size()
                                       ? 1.5f * gap + width_of(entries[i + 1])
                                       : 0);
      same_line_if_fits(need, spacing);
    }
    const ImVec2 at = ImGui::GetCursorScreenPos();
    draw_swatch(dl, at, em, e.swatch, e.colour);
    dl->AddText({at.x + swatch_w, at.y}, text, e.label.c_str());
    ImGui::Dummy(size);
  }
}

}  // namespace dsgd::gui
