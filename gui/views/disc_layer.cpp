#include "gui/views/disc_layer.h"

#include <GL/gl.h>
#include <GL/glext.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace dsgd::gui {

struct DiscLayer::State {
  GLuint texture = 0;
  PixelBuffer image;                  // what the texture holds
  std::vector<Disc> discs;            // what it shows, in texture pixels
  const PixelBuffer* base = nullptr;  // over what
  uint64_t base_version = 0;
};

namespace {

// The image holds premultiplied colour.
void premultiplied_blend(const ImDrawList*, const ImDrawCmd*) {
  glBlendFuncSeparate(GL_ONE, GL_ONE_MINUS_SRC_ALPHA, GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
}

}  // namespace

DiscLayer::DiscLayer() : state_(std::make_unique<State>()) {}

DiscLayer::~DiscLayer() {
  if (state_->texture) glDeleteTextures(1, &state_->texture);
}

void DiscLayer::draw(ImDrawList* dl, ImVec2 origin, ImVec2 size, std::span<const Disc> discs,
                     const PixelBuffer* base, uint64_t base_version) {
  State& layer = *state_;
  // On whole pixels, at the framebuffer's resolution, so texels land on pixels.
  const ImVec2 at{std::floor(origin.x), std::floor(origin.y)};
  const ImVec2 box{std::ceil(size.x), std::ceil(size.y)};
  const ImVec2 scale = ImGui::GetIO().DisplayFramebufferScale;
  const int w = static_cast<int>(box.x * scale.x), h = static_cast<int>(box.y * scale.y);
  if (base && (base->width != w || base->height != h)) base = nullptr;
  if (w <= 0 || h <= 0 || (discs.empty() && !base)) return;
  std::vector<Disc> scaled;
  scaled.reserve(discs.size());
  for (const Disc& d : discs)
    scaled.push_back({(d.x + origin.x - at.x) * scale.x, (d.y + origin.y - at.y) * scale.y,
                      d.r * scale.x, d.rgba, d.tip_x * scale.x, d.tip_y * scale.y});
  const bool resized = w != layer.image.width || h != layer.image.height;
  if (resized || scaled != layer.discs || base != layer.base ||
      (base && base_version != layer.base_version)) {
    GLint last_texture = 0;
    glGetIntegerv(GL_TEXTURE_BINDING_2D, &last_texture);
    if (!layer.texture) glGenTextures(1, &layer.texture);
    glBindTexture(GL_TEXTURE_2D, layer.texture);
    if (resized) layer.image.resize(w, h);
    paint_discs(layer.image, scaled, base);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    if (resized) {
      glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
      glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
      glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
      glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
      glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE,
                   layer.image.pixels.data());
    } else {
      glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE,
                      layer.image.pixels.data());
    }
    glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(last_texture));
    layer.discs = std::move(scaled);
    layer.base = base;
    layer.base_version = base_version;
  }
  dl->AddCallback(premultiplied_blend, nullptr);
  dl->AddImage(reinterpret_cast<ImTextureID>(static_cast<intptr_t>(layer.texture)), at,
               {at.x + box.x, at.y + box.y});
  dl->AddCallback(ImDrawCallback_ResetRenderState, nullptr);
}

}  // namespace dsgd::gui
