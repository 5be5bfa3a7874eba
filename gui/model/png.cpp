#include "gui/model/png.h"

#include <algorithm>
#include <unordered_set>

#include <fmt/format.h>
#include <stb/stb_image.h>
#include <stb/stb_image_write.h>

#include "core/errors.h"
#include "core/io/atomic_file.h"

namespace dsgd::gui {

uint32_t Image::pixel(int x, int y) const {
  const size_t i = (static_cast<size_t>(y) * width + x) * 3;
  return static_cast<uint32_t>(rgb[i]) << 16 | static_cast<uint32_t>(rgb[i + 1]) << 8 | rgb[i + 2];
}

void write_png(const std::string& path, const Image& image) {
  if (image.width <= 0 || image.height <= 0 ||
      image.rgb.size() != static_cast<size_t>(image.width) * image.height * 3)
    throw DataError(fmt::format("{}: no image to write ({}x{})", path, image.width, image.height));
  // Encoded in memory, then written atomically: stb's own file writer ignores a short
  // write (a full disk left a PNG cut at 16 KiB behind a "wrote" message).
  std::string png;
  const auto append = [](void* context, void* data, int size) {
    static_cast<std::string*>(context)->append(static_cast<const char*>(data),
                                               static_cast<size_t>(size));
  };
  if (!stbi_write_png_to_func(append, &png, image.width, image.height, 3, image.rgb.data(),
                              image.width * 3))
    throw DataError(fmt::format("{}: cannot encode the PNG", path));
  write_file_atomic(path, png);
}

Image read_png(const std::string& path) {
  int w = 0, h = 0, channels = 0;
  stbi_uc* data = stbi_load(path.c_str(), &w, &h, &channels, 3);
  if (!data)
    throw DataError(fmt::format("{}: not a readable image ({})", path, stbi_failure_reason()));
  Image image{.width = w, .height = h};
  image.rgb.assign(data, data + static_cast<size_t>(w) * h * 3);
  stbi_image_free(data);
  return image;
}

int distinct_colours(const Image& image, int x0, int y0, int x1, int y1) {
  x0 = std::clamp(x0, 0, image.width);
  x1 = std::clamp(x1, 0, image.width);
  y0 = std::clamp(y0, 0, image.height);
  y1 = std::clamp(y1, 0, image.height);
  std::unordered_set<uint32_t> seen;
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x)
      seen.insert(image.pixel(x, y) & 0xF8F8F8u);
  return static_cast<int>(seen.size());
}

}  // namespace dsgd::gui
