// A layer of lines rendered once into an image and kept while they stay the same. The
// topology view of 32 ranks that all talk has 496 long links; a software renderer (Mesa
// llvmpipe, as under Xvfb) pays for every tile each line crosses, every frame, about 5 ms
// of a 1280x720 frame. Rendered into a framebuffer object when they change and read back,
// they become the image the packets are painted over (disc_layer.h): with them, one pass
// over the view's pixels.
#pragma once

#include <imgui.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "gui/views/discs.h"

namespace dsgd::gui {

struct LayerLine {
  float ax, ay, bx, by;  // ends, relative to the layer's top-left corner
  ImU32 colour;
  float width;
  bool operator==(const LayerLine&) const = default;
};

struct LineLayerPixels {
  const PixelBuffer* image = nullptr;
  uint64_t version = 0;
};

// One layer's texture, framebuffer and last image. Made and destroyed while the ImGui
// OpenGL 3 backend's context is current (the window owns it).
class LineLayer {
 public:
  LineLayer();
  ~LineLayer();  // frees the texture and the framebuffer
  LineLayer(const LineLayer&) = delete;
  LineLayer& operator=(const LineLayer&) = delete;

  // The lines in a box of `size` (ImGui units) as an image on the CPU: premultiplied RGBA,
  // top row first, at the framebuffer's resolution, rendered and read back only when the
  // lines or the box change. `version` counts those redraws. `image` is null when no
  // framebuffer object can be made: then draw the lines with draw_lines.
  LineLayerPixels pixels(ImVec2 size, const std::vector<LayerLine>& lines);

  struct State;  // the GL objects and the last image (the .cpp's)

 private:
  std::unique_ptr<State> state_;
};

// The fallback: draws `lines` into `dl` as shapes, relative to `origin`.
void draw_lines(ImDrawList* dl, ImVec2 origin, const std::vector<LayerLine>& lines);

}  // namespace dsgd::gui
