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
