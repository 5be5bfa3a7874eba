#include "gui/views/capture.h"

#include <GL/gl.h>

#include <cstring>

namespace dsgd::gui {

Image capture_framebuffer(int width, int height) {
  Image image{.width = width, .height = height};
  image.rgb.resize(static_cast<size_t>(width) * height * 3);
  std::vector<uint8_t> flipped(image.rgb.size());
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, width, height, GL_RGB, GL_UNSIGNED_BYTE, flipped.data());
  const size_t row = static_cast<size_t>(width) * 3;
  for (int y = 0; y < height; ++y)  // OpenGL's first row is the bottom one
    std::memcpy(image.rgb.data() + y * row, flipped.data() + (height - 1 - y) * row, row);
  return image;
}

}  // namespace dsgd::gui
