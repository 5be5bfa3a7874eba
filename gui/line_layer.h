// A layer of lines drawn once into a texture and shown as one image while they stay the
// same. The topology view of 32 ranks that all talk has 496 long links; a software renderer
// (Mesa llvmpipe, as under Xvfb) pays for every tile each line crosses, every frame, about
// 5 ms of a 1280x720 frame. Drawn into a framebuffer object when they change and blended
// as one textured quad, they cost one pass over the view's pixels.
#pragma once

#include <imgui.h>

#include <cstdint>
#include <vector>

#include "gui/discs.h"

namespace dsgd::gui {

struct LayerLine {
  float ax, ay, bx, by;  // ends, relative to the layer's top-left corner
  ImU32 colour;
  float width;
  bool operator==(const LayerLine&) const = default;
};

// Draws `lines` into `dl` inside the box [origin, origin + size): from the cached texture
// when it is current, else after redrawing it; directly, line by line, when no framebuffer
// object can be made. Needs the ImGui OpenGL 3 backend's context current.
void draw_line_layer(ImDrawList* dl, ImVec2 origin, ImVec2 size,
                     const std::vector<LayerLine>& lines);

// The layer's image on the CPU (premultiplied RGBA, top row first, as PixelBuffer), read
// back from the texture each time it is redrawn, so that the packets can be painted over it
// and both drawn as one image (disc_layer.h): one pass over the view's pixels less. Its
// version counts the redraws. `image` is null when no framebuffer object can be made; then
// draw_line_layer draws the lines as shapes.
struct LineLayerPixels {
  const PixelBuffer* image = nullptr;
  uint64_t version = 0;
};
LineLayerPixels line_layer_pixels(ImVec2 origin, ImVec2 size, const std::vector<LayerLine>& lines);

// A draw callback that blends premultiplied colour (what the layers' textures hold); put
// ImDrawCallback_ResetRenderState after the image.
void premultiplied_blend(const ImDrawList*, const ImDrawCmd*);

// Frees the texture and the framebuffer; call before the GL context goes.
void release_line_layer();

}  // namespace dsgd::gui
