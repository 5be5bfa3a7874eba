// The topology's packets, painted on the CPU into one image (gui/discs.h): no OpenGL.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "gui/views/discs.h"

using namespace dsgd::gui;

TEST_CASE("packets are painted as anti-aliased discs, later ones on top", "[gui][discs]") {
  PixelBuffer image;
  image.resize(40, 20);
  const uint32_t red = 0xff0000ffu, half_blue = 0x80ff0000u;  // IM_COL32 layout: 0xAABBGGRR
  const Disc discs[] = {{10, 10, 5, red}, {14, 10, 3, half_blue}, {39, 0, 4, red}};
  paint_discs(image, discs);
  const auto at = [&](int x, int y) { return image.pixels[static_cast<size_t>(y) * 40 + x]; };
  CHECK(at(7, 9) == red);   // inside the first disc only
  CHECK(at(30, 15) == 0u);  // outside every disc: transparent
  CHECK(at(25, 10) == 0u);
  // Half-transparent blue over red, premultiplied: blue 128, red 255 * (1 - 128/255), alpha 255.
  const uint32_t mixed = at(13, 10);
  CHECK((mixed & 0xff) == Approx(127).margin(1));
  CHECK(((mixed >> 16) & 0xff) == Approx(128).margin(1));
  CHECK((mixed >> 24) == 255u);
  // The rim: partly covered pixels have partial alpha (premultiplied: colour <= alpha).
  int partial = 0;
  for (int x = 0; x < 40; ++x)
    for (int y = 0; y < 20; ++y) {
      const uint32_t p = at(x, y), a = p >> 24;
      CHECK((p & 0xff) <= a);
      partial += a > 0 && a < 255;
    }
  CHECK(partial > 10);
  // Cut off at the image's edge (the third disc): painted inside, nothing outside.
  CHECK(at(39, 0) == red);
  // Painting again clears what was there.
  paint_discs(image, {});
  CHECK(at(7, 9) == 0u);
}

TEST_CASE("a disc covers each pixel by how far its rim lies beyond the pixel's centre",
          "[gui][discs]") {
  // One opaque disc at a time, at fractional centres and radii, some cut off by the edges:
  // each pixel's alpha follows from its centre's distance alone (filled spans, rim pixels).
  PixelBuffer image;
  image.resize(32, 24);
  const uint32_t green = 0xff00ff00u;
  int checked = 0;
  for (float cx : {-3.3f, 0.0f, 7.25f, 15.5f, 30.9f, 35.0f})
    for (float cy : {-2.0f, 4.6f, 11.5f, 23.2f})
      for (float r : {0.4f, 1.0f, 3.7f, 9.5f}) {
        const Disc disc{cx, cy, r, green};
        paint_discs(image, std::span<const Disc>(&disc, 1));
        const float inner = std::max(0.0f, r - 0.5f), outer = r + 0.5f;
        for (int y = 0; y < 24; ++y)
          for (int x = 0; x < 32; ++x) {
            const float dx = x + 0.5f - cx, dy = y + 0.5f - cy, d2 = dx * dx + dy * dy;
            const uint32_t cover =
                d2 >= outer * outer ? 0u
                : d2 < inner * inner
                    ? 256u
                    : static_cast<uint32_t>(std::clamp(outer - std::sqrt(d2), 0.0f, 1.0f) * 256.0f);
            const uint32_t alpha = image.pixels[static_cast<size_t>(y) * 32 + x] >> 24;
            if (alpha != (255 * cover) >> 8) {
              FAIL_CHECK("disc (" << cx << ", " << cy << ", r " << r << "): pixel (" << x << ", "
                                  << y << ") alpha " << alpha << ", expected "
                                  << ((255 * cover) >> 8));
            }
            ++checked;
          }
      }
  CHECK(checked == 6 * 4 * 4 * 32 * 24);
}

TEST_CASE("packets are painted over the links' image when one is given", "[gui][discs]") {
  PixelBuffer links, image;
  links.resize(16, 8);
  const uint32_t grey = 0xff808080u, red = 0xff0000ffu;
  for (int x = 0; x < 16; ++x)
    links.pixels[4 * 16 + x] = grey;  // a line along row 4
  image.resize(16, 8);
  const Disc disc{12.5f, 4.5f, 2.0f, red};
  paint_discs(image, std::span<const Disc>(&disc, 1), &links);
  CHECK(image.pixels[4 * 16 + 1] == grey);   // the line, away from the disc
  CHECK(image.pixels[4 * 16 + 12] == red);   // the disc over it
  CHECK(image.pixels[0] == 0u);              // neither
  CHECK(links.pixels[4 * 16 + 12] == grey);  // the links' image itself is left as it was
  // A base of another size is ignored: transparent start.
  PixelBuffer other;
  other.resize(4, 4);
  std::fill(other.pixels.begin(), other.pixels.end(), grey);
  paint_discs(image, std::span<const Disc>(&disc, 1), &other);
  CHECK(image.pixels[4 * 16 + 1] == 0u);
  CHECK(image.pixels[4 * 16 + 12] == red);
}

TEST_CASE("a disc with a tip is a drop that points at it", "[gui][discs]") {
  // Tips in eight directions: the painted pixels lean towards the tip, reach it and no
  // further, and the rim stays anti-aliased.
  PixelBuffer image;
  image.resize(64, 64);
  const uint32_t orange = 0xff008cffu;
  for (int k = 0; k < 8; ++k) {
    const float angle = 0.785398f * static_cast<float>(k);
    const float tx = 16 * std::cos(angle), ty = 16 * std::sin(angle);
    const Disc drop{32, 32, 8, orange, tx, ty};
    paint_discs(image, std::span<const Disc>(&drop, 1));
    double sum = 0, sx = 0, sy = 0;
    int partial = 0;
    for (int y = 0; y < 64; ++y)
      for (int x = 0; x < 64; ++x) {
        const uint32_t a = image.pixels[static_cast<size_t>(y) * 64 + x] >> 24;
        if (a == 0) continue;
        sum += a, sx += a * (x + 0.5), sy += a * (y + 0.5);
        partial += a < 255;
        // Nothing beyond the tip (measured along the tip's direction), nor behind the disc.
        const float along = ((x + 0.5f - 32) * tx + (y + 0.5f - 32) * ty) / 16;
        CHECK(along <= 16 + 1);
        CHECK(along >= -8 - 1);
      }
    INFO("tip at angle " << k << "/8");
    const double cx = sx / sum - 32, cy = sy / sum - 32;
    CHECK((cx * tx + cy * ty) / 16 > 1.2);          // leans towards the tip ...
    CHECK(std::abs(cx * ty - cy * tx) / 16 < 0.5);  // ... and not sideways
    CHECK(partial > 20);
    // The tip itself is painted (half covered or more), the disc's centre wholly.
    const int tip_x = static_cast<int>(32 + tx * 0.95f), tip_y = static_cast<int>(32 + ty * 0.95f);
    CHECK((image.pixels[static_cast<size_t>(tip_y) * 64 + tip_x] >> 24) > 0);
    CHECK(image.pixels[32 * 64 + 32] == orange);
  }
  // No tip, or one inside the disc: a plain disc.
  const Disc plain{32, 32, 8, orange}, short_tip{32, 32, 8, orange, 4, 0};
  PixelBuffer other;
  other.resize(64, 64);
  paint_discs(image, std::span<const Disc>(&plain, 1));
  paint_discs(other, std::span<const Disc>(&short_tip, 1));
  CHECK(image.pixels == other.pixels);
}
