// How the font atlas is sampled. ImGui's OpenGL 3 backend filters it linearly, which a
// software renderer (Mesa llvmpipe under Xvfb, the classroom VM) pays for on every pixel
// it draws: solid shapes sample the atlas's white texel too. At a font scale of 1 every
// glyph lands on whole pixels, so nearest sampling draws the same image for less (a frame
// of the bench's dashboard: 28 ms to 24 ms). Scaled fonts (FontGlobalScale) stay linear.
#pragma once

namespace dsgd::gui {

// Call once a frame after ImGui_ImplOpenGL3_NewFrame (which may rebuild the atlas).
void choose_font_filter();

}  // namespace dsgd::gui
