#include "gui/views/font_texture.h"

#include <GL/gl.h>
#include <imgui.h>

#include <cstdint>

namespace dsgd::gui {

void choose_font_filter() {
  const ImGuiIO& io = ImGui::GetIO();
  if (!io.Fonts->TexID) return;  // not uploaded yet
  const GLint filter = io.FontGlobalScale == 1.0f ? GL_NEAREST : GL_LINEAR;
  glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(reinterpret_cast<intptr_t>(io.Fonts->TexID)));
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, filter);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, filter);
}

}  // namespace dsgd::gui
