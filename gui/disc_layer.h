// The topology's packets and links as one texture: the packets painted on the CPU
// (discs.h) over the links' image when either changes, uploaded, and drawn as one quad.
#pragma once

#include <imgui.h>

#include <cstdint>
#include <span>

#include "gui/discs.h"

namespace dsgd::gui {

// Draws `discs` (centres and radii in ImGui units, relative to `origin`) into `dl` as one
// image covering [origin, origin + size), painted over `base` when given (the links, from
// line_layer_pixels, of the same size; `base_version` tells when it changed). Needs the
// ImGui OpenGL 3 backend's context.
void draw_disc_layer(ImDrawList* dl, ImVec2 origin, ImVec2 size, std::span<const Disc> discs,
                     const PixelBuffer* base = nullptr, uint64_t base_version = 0);

// Frees the texture; call before the GL context goes.
void release_disc_layer();

}  // namespace dsgd::gui
