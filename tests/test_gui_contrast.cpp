// Colours that can be read (gui/model/contrast.h): black or white text on any coloured bar
// at WCAG's 4.5:1 (the light theme wrote white digits on cyan and yellow), and every theme's
// ImGui colours (gui/views/theme.h, set up in a context without a renderer): text on every
// background it is drawn on at 4.5:1, check marks and slider grabs against their frame and
// the frames' borders against the window at 3:1 (the light theme's check boxes were white on
// white).
#include <catch2/catch.hpp>

#include <imgui.h>

#include "gui/model/contrast.h"
#include "gui/views/theme.h"

using namespace dsgd::gui;

TEST_CASE("contrast ratios as WCAG 2 defines them", "[gui]") {
  CHECK(contrast_ratio(rgba(0, 0, 0), rgba(255, 255, 255)) == Approx(21));
  CHECK(contrast_ratio(rgba(120, 40, 200), rgba(120, 40, 200)) == Approx(1));
  CHECK(contrast_ratio(rgba(255, 255, 255), rgba(0, 0, 0)) == Approx(21));
  CHECK(relative_luminance(rgba(255, 255, 255)) == Approx(1));
}

TEST_CASE("text on a coloured bar is black or white, whichever reads", "[gui]") {
  const Rgba black = rgba(0, 0, 0), white = rgba(255, 255, 255);
  CHECK(text_colour_on(rgba(0, 255, 255)) == black);  // cyan
  CHECK(text_colour_on(rgba(255, 255, 0)) == black);  // yellow
  CHECK(text_colour_on(rgba(120, 20, 20)) == white);  // dark red
  CHECK(text_colour_on(rgba(40, 40, 120)) == white);  // navy
  for (int r = 0; r < 256; r += 15)
    for (int g = 0; g < 256; g += 15)
      for (int b = 0; b < 256; b += 15) {
        const Rgba bar = rgba(r, g, b);
        INFO(r << "," << g << "," << b);
        CHECK(contrast_ratio(text_colour_on(bar), bar) >= 4.5);
      }
}

TEST_CASE("a fill is nudged just until its text reads", "[gui]") {
  const Rgba white = rgba(255, 255, 255), black = rgba(0, 0, 0);
  const Rgba yellow = rgba(230, 179, 0);  // ImGui's dark progress bar, under white text
  const Rgba darker = legible_fill(yellow, white, 4.5);
  CHECK(contrast_ratio(darker, white) >= 4.5);
  CHECK(relative_luminance(darker) < relative_luminance(yellow));
  CHECK(legible_fill(white, black, 4.5) == white);  // already legible: unchanged
  CHECK(over(rgba(255, 0, 0, 0), rgba(1, 2, 3)) == rgba(1, 2, 3));
  CHECK(over(rgba(255, 0, 0, 255), rgba(1, 2, 3)) == rgba(255, 0, 0));
}

namespace {
Rgba colour(ImGuiCol slot) {
  return ImGui::ColorConvertFloat4ToU32(ImGui::GetStyle().Colors[slot]);
}
}  // namespace

TEST_CASE("every theme's text reads on every background ImGui draws it on", "[gui]") {
  ImGui::CreateContext();
  for (Theme theme : {Theme::dark, Theme::light, Theme::projector}) {
    apply_theme(theme, 1.0f);
    const Palette pal = palette_for(theme);
    const Rgba text = colour(ImGuiCol_Text);
    INFO("theme " << static_cast<int>(theme));
    for (ImGuiCol slot :
         {ImGuiCol_FrameBg, ImGuiCol_FrameBgHovered, ImGuiCol_FrameBgActive, ImGuiCol_Button,
          ImGuiCol_ButtonHovered, ImGuiCol_ButtonActive, ImGuiCol_Header, ImGuiCol_HeaderHovered,
          ImGuiCol_TitleBg, ImGuiCol_TitleBgActive, ImGuiCol_PlotHistogram, ImGuiCol_PopupBg}) {
      INFO("slot " << ImGui::GetStyleColorName(slot));
      CHECK(contrast_ratio(text, over(colour(slot), pal.background)) >= 4.5);
    }
    const Rgba frame = over(colour(ImGuiCol_FrameBg), pal.background);
    CHECK(contrast_ratio(over(colour(ImGuiCol_CheckMark), frame), frame) >= 3);
    CHECK(contrast_ratio(over(colour(ImGuiCol_SliderGrab), frame), frame) >= 3);
    if (theme != Theme::dark) {  // a light frame on a light window: its border shows it
      CHECK(ImGui::GetStyle().FrameBorderSize >= 1);
      CHECK(contrast_ratio(over(colour(ImGuiCol_Border), pal.background), pal.background) >= 3);
    }
    // The views' own text on the views' background.
    CHECK(contrast_ratio(pal.text, pal.background) >= 4.5);
    CHECK(contrast_ratio(pal.dim_text, pal.background) >= 4.5);
  }
  ImGui::DestroyContext();
}
