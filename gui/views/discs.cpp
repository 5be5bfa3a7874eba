#include "gui/views/discs.h"

#include <algorithm>
#include <cmath>

namespace dsgd::gui {

void PixelBuffer::resize(int w, int h) {
  width = w;
  height = h;
  pixels.assign(static_cast<size_t>(std::max(0, w)) * static_cast<size_t>(std::max(0, h)), 0);
}

namespace {

// src over dst, both premultiplied; `cover` in 0..256 scales the source.
uint32_t over(uint32_t dst, uint32_t src, uint32_t cover) {
  uint32_t out = 0;
  const uint32_t src_a = (((src >> 24) & 0xff) * cover) >> 8;
  for (int shift = 0; shift < 32; shift += 8) {
    const uint32_t s = (((src >> shift) & 0xff) * cover) >> 8;
    const uint32_t d = (dst >> shift) & 0xff;
    out |= std::min<uint32_t>(255, s + (d * (255 - src_a) + 127) / 255) << shift;
  }
  return out;
}

uint32_t premultiply(uint32_t rgba) {
  const uint32_t a = rgba >> 24;
  uint32_t out = a << 24;
  for (int shift = 0; shift < 24; shift += 8)
    out |= ((((rgba >> shift) & 0xff) * a + 127) / 255) << shift;
  return out;
}

}  // namespace

void paint_discs(PixelBuffer& image, std::span<const Disc> discs, const PixelBuffer* base) {
  if (base && base->width == image.width && base->height == image.height)
    image.pixels = base->pixels;
  else
    std::fill(image.pixels.begin(), image.pixels.end(), 0u);
  for (const Disc& d : discs) {
    if (!(d.r > 0)) continue;
    const uint32_t colour = premultiply(d.rgba);
    const bool opaque = (colour >> 24) == 255;
    // Pixel (x, y) has its centre at (x + 0.5, y + 0.5); its coverage is how far the rim
    // lies beyond the centre, clamped to one pixel.
    const int x0 = std::max(0, static_cast<int>(std::floor(d.x - d.r - 0.5f)));
    const int x1 = std::min(image.width - 1, static_cast<int>(std::ceil(d.x + d.r + 0.5f)));
    const int y0 = std::max(0, static_cast<int>(std::floor(d.y - d.r - 0.5f)));
    const int y1 = std::min(image.height - 1, static_cast<int>(std::ceil(d.y + d.r + 0.5f)));
    const float inner = std::max(0.0f, d.r - 0.5f), outer = d.r + 0.5f;
    for (int y = y0; y <= y1; ++y) {
      const float dy = static_cast<float>(y) + 0.5f - d.y;
      if (dy * dy >= outer * outer) continue;
      uint32_t* row = image.pixels.data() + static_cast<size_t>(y) * image.width;
      // Pixels whose centres lie within `inner` are wholly covered: one span, filled; only
      // the rim on either side needs a distance each.
      const float half = dy * dy < inner * inner ? std::sqrt(inner * inner - dy * dy) : -1.0f;
      const int in0 =
          half < 0 ? x1 + 1 : std::max(x0, static_cast<int>(std::ceil(d.x - half - 0.5f)));
      const int in1 = half < 0 ? x1 : std::min(x1, static_cast<int>(std::floor(d.x + half - 0.5f)));
      const auto rim = [&](int x) {
        const float dx = static_cast<float>(x) + 0.5f - d.x, d2 = dx * dx + dy * dy;
        if (d2 >= outer * outer) return;
        const float cover = std::clamp(outer - std::sqrt(d2), 0.0f, 1.0f);
        row[x] = over(row[x], colour, static_cast<uint32_t>(cover * 256.0f));
      };
      for (int x = x0; x < std::min(in0, x1 + 1); ++x)
        rim(x);
      for (int x = in0; x <= in1; ++x)
        row[x] = opaque ? colour : over(row[x], colour, 256);
      for (int x = std::max(in1 + 1, in0); x <= x1; ++x)
        rim(x);
    }
  }
}

}  // namespace dsgd::gui
