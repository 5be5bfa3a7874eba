// The topology's packets and links as one texture: the packets painted on the CPU
// (discs.h) over the links' image when either changes, uploaded, and drawn as one quad.
#pragma once

#include <imgui.h>

#include <cstdint>
#include <memory>
#include <span>

#include "gui/views/discs.h"

namespace dsgd::gui {

// The layer's texture and what it shows. Made and destroyed while the ImGui OpenGL 3
// backend's context is current (the window owns it).
class DiscLayer {
 public:
  DiscLayer();
  ~DiscLayer();  // frees the texture
  DiscLayer(const DiscLayer&) = delete;
  DiscLayer& operator=(const DiscLayer&) = delete;

  // Draws `discs` (centres and radii in ImGui units, relative to `origin`) into `dl` as one
  // image covering [origin, origin + size), painted over `base` when given (the links, from
  // LineLayer::pixels, of the same size; `base_version` tells when it changed).
  void draw(ImDrawList* dl, ImVec2 origin, ImVec2 size, std::span<const Disc> discs,
            const PixelBuffer* base = nullptr, uint64_t base_version = 0);

  struct State;  // the GL objects and the last image (the .cpp's)

 private:
  std::unique_ptr<State> state_;
};

}  // namespace dsgd::gui
