// RGB images for screenshots and the tests that check them: write and read PNG (through
// Debian's libstb, which libimgui-dev depends on) and count the distinct colours in a
// rectangle, the "is this view blank?" check. Not an image library.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dsgd::gui {

struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;            // (height, width, 3), top row first
  uint32_t pixel(int x, int y) const;  // 0xRRGGBB
};

// DataError when the file cannot be written / read or is not a PNG.
void write_png(const std::string& path, const Image& image);
Image read_png(const std::string& path);

// Distinct colours in [x0, x1) x [y0, y1) (clipped to the image), each channel quantised to
// 32 levels so antialiasing shades of one colour count once.
int distinct_colours(const Image& image, int x0, int y0, int x1, int y1);

}  // namespace dsgd::gui
