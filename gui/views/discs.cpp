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

// src over dst, both premultiplied; `cover` in 0..256 scales the source. Two channels at a
// time (red and blue, green and alpha, in 16-bit lanes); the destination is scaled by
// (255 - source alpha) / 255, rounded ((t + (t >> 8)) >> 8 with t = x * k + 128 is
// x * k / 255 rounded). Premultiplied colour never exceeds its alpha, so no lane overflows.
uint32_t over(uint32_t dst, uint32_t src, uint32_t cover) {
  constexpr uint32_t kLanes = 0x00ff00ffu;
  const uint32_t src_rb = ((src & kLanes) * cover >> 8) & kLanes;
  const uint32_t src_ag = (((src >> 8) & kLanes) * cover >> 8) & kLanes;
  const uint32_t keep = 255 - (src_ag >> 16);
  uint32_t dst_rb = (dst & kLanes) * keep + 0x00800080u;
  uint32_t dst_ag = ((dst >> 8) & kLanes) * keep + 0x00800080u;
  dst_rb = ((dst_rb + ((dst_rb >> 8) & kLanes)) >> 8) & kLanes;
  dst_ag = ((dst_ag + ((dst_ag >> 8) & kLanes)) >> 8) & kLanes;
  return (src_rb + dst_rb) | (src_ag + dst_ag) << 8;
}

uint32_t premultiply(uint32_t rgba) {
  const uint32_t a = rgba >> 24;
  uint32_t out = a << 24;
  for (int shift = 0; shift < 24; shift += 8)
    out |= ((((rgba >> shift) & 0xff) * a + 127) / 255) << shift;
  return out;
}

// The disc: pixels whose centres lie within `inner` of the centre are wholly covered, one
// span per row; only the rim on either side needs a distance each.
void paint_disc(PixelBuffer& image, const Disc& d, uint32_t colour) {
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

// The tip: the triangle between it and the two points where lines from it touch the disc
// (with the disc, their convex hull). Each pixel is covered by how far its centre lies
// inside the nearest edge, clamped to one pixel; pixels the disc covered whole are left.
// Row by row, each edge bounds x (it is linear in x), so only the pixels within half a
// pixel of the triangle are visited, and those a pixel inside every edge are filled.
void paint_tip(PixelBuffer& image, const Disc& d, uint32_t colour) {
  const float len = std::sqrt(d.tip_x * d.tip_x + d.tip_y * d.tip_y);
  if (!(len > d.r + 0.5f)) return;
  const float ux = d.tip_x / len, uy = d.tip_y / len, c = d.r / len;
  const float s = std::sqrt(1 - c * c);
  const float px[3] = {d.x + d.tip_x, d.x + d.r * (c * ux - s * uy), d.x + d.r * (c * ux + s * uy)};
  const float py[3] = {d.y + d.tip_y, d.y + d.r * (c * uy + s * ux), d.y + d.r * (c * uy - s * ux)};
  // Each edge's outward unit normal n and offset o: q lies n.q - o outside it.
  float nx[3], ny[3], o[3], inv_nx[3];
  for (int i = 0; i < 3; ++i) {
    const int j = (i + 1) % 3, k = (i + 2) % 3;
    float ex = py[j] - py[i], ey = px[i] - px[j];
    const float el = std::sqrt(ex * ex + ey * ey);
    ex /= el, ey /= el;
    if (ex * (px[k] - px[i]) + ey * (py[k] - py[i]) > 0) ex = -ex, ey = -ey;
    nx[i] = ex, ny[i] = ey, o[i] = ex * px[i] + ey * py[i];
    inv_nx[i] = std::abs(ex) < 1e-6f ? 0 : 1 / ex;
  }
  const int y0 = std::max(0, static_cast<int>(std::floor(std::min({py[0], py[1], py[2]}) - 1)));
  const int y1 =
      std::min(image.height - 1, static_cast<int>(std::ceil(std::max({py[0], py[1], py[2]}) + 1)));
  const float inner = std::max(0.0f, d.r - 0.5f);
  const bool opaque = (colour >> 24) == 255;
  for (int y = y0; y <= y1; ++y) {
    const float qy = static_cast<float>(y) + 0.5f;
    // Pixel centres with x in [lo, hi] lie within half a pixel of the triangle; those in
    // [full_lo, full_hi], half a pixel inside every edge.
    float lo = -1e30f, hi = 1e30f, full_lo = -1e30f, full_hi = 1e30f;
    bool empty = false;
    for (int i = 0; i < 3; ++i) {
      const float rest = ny[i] * qy - o[i];  // outside = nx * x + rest
      if (std::abs(nx[i]) < 1e-6f) {
        empty |= rest >= 0.5f;
        if (rest > -0.5f) full_lo = 1e30f;
        continue;
      }
      const float any = (0.5f - rest) * inv_nx[i], whole = (-0.5f - rest) * inv_nx[i];
      if (nx[i] > 0)
        hi = std::min(hi, any), full_hi = std::min(full_hi, whole);
      else
        lo = std::max(lo, any), full_lo = std::max(full_lo, whole);
    }
    if (empty || lo > hi) continue;
    const float dy = qy - d.y;
    const float disc_half = dy * dy < inner * inner ? std::sqrt(inner * inner - dy * dy) : -1.0f;
    const int x0 = std::max(0, static_cast<int>(std::ceil(lo - 0.5f)));
    const int x1 = std::min(image.width - 1, static_cast<int>(std::floor(hi - 0.5f)));
    // The pixels the disc covered whole, [skip0, skip1], are passed over.
    const int skip0 = disc_half < 0 ? x1 + 1 : static_cast<int>(std::ceil(d.x - disc_half - 0.5f));
    const int skip1 = disc_half < 0 ? x1 : static_cast<int>(std::floor(d.x + disc_half - 0.5f));
    uint32_t* row = image.pixels.data() + static_cast<size_t>(y) * image.width;
    for (int x = x0; x <= x1; ++x) {
      if (x >= skip0 && x <= skip1) {
        x = skip1;
        continue;
      }
      const float qx = static_cast<float>(x) + 0.5f;
      if (qx >= full_lo && qx <= full_hi) {
        row[x] = opaque ? colour : over(row[x], colour, 256);
        continue;
      }
      float outside = -1e30f;
      for (int i = 0; i < 3; ++i)
        outside = std::max(outside, nx[i] * qx + ny[i] * qy - o[i]);
      const float cover = std::clamp(0.5f - outside, 0.0f, 1.0f);
      if (cover > 0) row[x] = over(row[x], colour, static_cast<uint32_t>(cover * 256.0f));
    }
  }
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
    paint_disc(image, d, colour);
    if (d.tip_x != 0 || d.tip_y != 0) paint_tip(image, d, colour);
  }
}

}  // namespace dsgd::gui
