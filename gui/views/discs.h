// Discs painted on the CPU: the topology's packets. A software renderer (Mesa llvmpipe, as
// under Xvfb) pays for every small triangle it sets up, bins and shades in 4x4 blocks: a
// thousand packets drawn as ImGui circles took 1.4 to 2.5 ms more of a 1280x720 frame in the
// bench than when painted here into one premultiplied RGBA image and drawn as one textured
// quad (disc_layer.h). No OpenGL here, so the tests use it directly.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace dsgd::gui {

struct Disc {
  float x, y, r;  // centre and radius, in the image's pixels
  uint32_t rgba;  // ImGui's colour layout (IM_COL32): red in the lowest byte
  // An arrow's tip, relative to the centre (pixels): the disc becomes a drop pointing there
  // (the convex hull of the disc and the tip), so a packet shows where it goes. (0, 0): none.
  float tip_x = 0, tip_y = 0;
  bool operator==(const Disc&) const = default;
};

// Premultiplied RGBA, ImGui's byte order (as GL_RGBA / GL_UNSIGNED_BYTE on little-endian
// machines), top row first.
struct PixelBuffer {
  int width = 0, height = 0;
  std::vector<uint32_t> pixels;
  void resize(int w, int h);  // and clears
};

// Starts `image` from `base` (when given and of the same size) or transparent, and paints
// the discs in order, each over what is there, with an anti-aliased rim one pixel wide (and
// its tip, when it has one, with anti-aliased edges); parts outside the image are cut off.
void paint_discs(PixelBuffer& image, std::span<const Disc> discs,
                 const PixelBuffer* base = nullptr);

}  // namespace dsgd::gui
