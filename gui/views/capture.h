// Reads the current OpenGL framebuffer back into an Image (top row first), for headless
// screenshots and tests. Call after rendering and before swapping buffers.
#pragma once

#include "gui/model/png.h"

namespace dsgd::gui {

Image capture_framebuffer(int width, int height);

}  // namespace dsgd::gui
