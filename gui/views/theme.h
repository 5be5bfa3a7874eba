// Looks: dark, light and a high-contrast projector theme, the UI scale, the colours the
// views draw with, and the font (Debian's WenQuanYi Micro Hei, with the Simplified Chinese
// glyph ranges, so lesson text can be shown in Chinese). Not a skinning system.
#pragma once

#include <string>

#include <imgui.h>

#include "gui/model/layout.h"
#include "gui/model/settings.h"

namespace dsgd::gui {

// Colours of the views' own drawing (0xAABBGGRR).
struct Palette {
  Rgba background, panel, text, dim_text, grid, link, link_ring, link_slow, node, node_busy,
      node_straggler, node_crashed, node_outline, cursor, selection;
};
Palette palette_for(Theme theme);

// Replaces ImGui's style with the theme's, scaled by `scale` (call when either changes).
void apply_theme(Theme theme, float scale);

// The default CJK font, or "" when fonts-wqy-microhei is not installed.
std::string default_cjk_font();
// Loads `path` (or ImGui's default font when empty or missing) at kFontPx (tiling.h) x scale
// with the Latin and common Simplified Chinese glyphs, plus every character of the UI's own
// Chinese text (ui_text.h). `ranges` must outlive the font atlas (ImGui keeps a pointer): the
// caller owns it. Call before the first frame. Returns whether the CJK font was loaded.
// `extra_text`: more characters to include (the lessons' Chinese text, lesson_font_text()).
bool load_fonts(const std::string& path, float scale, ImVector<ImWchar>& ranges,
                const std::string& extra_text = "");

// A window title in the chosen language: "Topology" / "拓扑".
const char* view_title(View view, bool chinese);

}  // namespace dsgd::gui
