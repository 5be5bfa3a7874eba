// The topology's packets as one texture: painted on the CPU (discs.h) when they move,
// uploaded, and drawn as one quad blended over the links.
#pragma once

#include <imgui.h>

#include <span>

#include "gui/discs.h"

namespace dsgd::gui {

// Draws `discs` (centres and radii in ImGui units, relative to `origin`) into `dl` as one
// image covering [origin, origin + size). Needs the ImGui OpenGL 3 backend's context.
void draw_disc_layer(ImDrawList* dl, ImVec2 origin, ImVec2 size, std::span<const Disc> discs);

// Frees the texture; call before the GL context goes.
void release_disc_layer();

}  // namespace dsgd::gui
