#include "gui/views/line_layer.h"

#include <GL/gl.h>
#include <GL/glext.h>
#include <backends/imgui_impl_opengl3.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace dsgd::gui {

struct LineLayer::State {
  GLuint texture = 0, framebuffer = 0;
  int width = 0, height = 0;  // texture pixels
  ImVec2 size{};              // the box, in ImGui units
  std::vector<LayerLine> lines;
  bool failed = false;  // no framebuffer objects here: draw directly from now on
  PixelBuffer pixels;   // the texture, read back after each redraw
  uint64_t version = 0;
};

namespace {

using Layer = LineLayer::State;

void add_lines(ImDrawList* dl, ImVec2 at, const std::vector<LayerLine>& lines) {
  // Without the anti-aliased rim: it doubles the triangles and hardly shows on thin lines.
  const ImDrawListFlags flags = dl->Flags;
  dl->Flags &= ~(ImDrawListFlags_AntiAliasedLines | ImDrawListFlags_AntiAliasedLinesUseTex);
  for (const LayerLine& l : lines)
    dl->AddLine({at.x + l.ax, at.y + l.ay}, {at.x + l.bx, at.y + l.by}, l.colour, l.width);
  dl->Flags = flags;
}

// (Re)creates the texture at w x h and attaches it; false if the framebuffer is unusable.
bool allocate(Layer& layer, int w, int h) {
  if (!layer.texture) glGenTextures(1, &layer.texture);
  if (!layer.framebuffer) glGenFramebuffers(1, &layer.framebuffer);
  GLint last_texture = 0, last_framebuffer = 0;
  glGetIntegerv(GL_TEXTURE_BINDING_2D, &last_texture);
  glGetIntegerv(GL_FRAMEBUFFER_BINDING, &last_framebuffer);
  glBindTexture(GL_TEXTURE_2D, layer.texture);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
  // Pixel for pixel: the image is placed on whole pixels at the texture's own size.
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  glBindFramebuffer(GL_FRAMEBUFFER, layer.framebuffer);
  glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, layer.texture, 0);
  const bool complete = glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE;
  glBindFramebuffer(GL_FRAMEBUFFER, static_cast<GLuint>(last_framebuffer));
  glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(last_texture));
  layer.width = w;
  layer.height = h;
  return complete;
}

// Renders the lines into the texture with the ImGui backend itself, so they come out as
// they would on screen. The texture holds premultiplied colour (the backend's blending
// over a transparent clear), as the disc layer's image does.
void redraw(Layer& layer, ImVec2 size, ImVec2 scale) {
  ImDrawList list(ImGui::GetDrawListSharedData());
  list._ResetForNewFrame();
  list.PushTextureID(ImGui::GetIO().Fonts->TexID);  // its white pixel colours solid shapes
  list.PushClipRect({0, 0}, size);
  add_lines(&list, {0, 0}, layer.lines);
  ImDrawList* lists[] = {&list};
  ImDrawData data;
  data.Valid = true;
  data.CmdLists = lists;
  data.CmdListsCount = 1;
  data.TotalVtxCount = list.VtxBuffer.Size;
  data.TotalIdxCount = list.IdxBuffer.Size;
  data.DisplayPos = {0, 0};
  data.DisplaySize = size;
  data.FramebufferScale = scale;

  GLint last_framebuffer = 0, last_viewport[4];
  GLfloat last_clear[4];
  glGetIntegerv(GL_FRAMEBUFFER_BINDING, &last_framebuffer);
  glGetIntegerv(GL_VIEWPORT, last_viewport);
  glGetFloatv(GL_COLOR_CLEAR_VALUE, last_clear);
  glBindFramebuffer(GL_FRAMEBUFFER, layer.framebuffer);
  glViewport(0, 0, layer.width, layer.height);
  glClearColor(0, 0, 0, 0);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(&data);  // restores the state it changes, bar the target
  // Read back for line_layer_pixels (rare: the lines change when a link is first used), the
  // framebuffer's bottom row first: flipped.
  layer.pixels.resize(layer.width, layer.height);
  std::vector<uint32_t> rows(layer.pixels.pixels.size());
  glPixelStorei(GL_PACK_ALIGNMENT, 4);
  glReadPixels(0, 0, layer.width, layer.height, GL_RGBA, GL_UNSIGNED_BYTE, rows.data());
  for (int y = 0; y < layer.height; ++y)
    std::copy_n(rows.data() + static_cast<size_t>(layer.height - 1 - y) * layer.width, layer.width,
                layer.pixels.pixels.data() + static_cast<size_t>(y) * layer.width);
  ++layer.version;
  glBindFramebuffer(GL_FRAMEBUFFER, static_cast<GLuint>(last_framebuffer));
  glClearColor(last_clear[0], last_clear[1], last_clear[2], last_clear[3]);
  glViewport(last_viewport[0], last_viewport[1], last_viewport[2], last_viewport[3]);
}

}  // namespace

LineLayer::LineLayer() : state_(std::make_unique<State>()) {}

LineLayer::~LineLayer() {
  if (state_->framebuffer) glDeleteFramebuffers(1, &state_->framebuffer);
  if (state_->texture) glDeleteTextures(1, &state_->texture);
}

LineLayerPixels LineLayer::pixels(ImVec2 size, const std::vector<LayerLine>& lines) {
  Layer& layer = *state_;
  const ImVec2 box{std::ceil(size.x), std::ceil(size.y)};
  const ImVec2 scale = ImGui::GetIO().DisplayFramebufferScale;
  const int w = static_cast<int>(box.x * scale.x), h = static_cast<int>(box.y * scale.y);
  if (layer.failed || w <= 0 || h <= 0) return {};
  const bool resized = w != layer.width || h != layer.height;
  if (resized && !allocate(layer, w, h)) {
    layer.failed = true;
    return {};
  }
  if (resized || box.x != layer.size.x || box.y != layer.size.y || lines != layer.lines) {
    layer.lines = lines;
    layer.size = box;
    redraw(layer, box, scale);
  }
  return {&layer.pixels, layer.version};
}

void draw_lines(ImDrawList* dl, ImVec2 origin, const std::vector<LayerLine>& lines) {
  add_lines(dl, {std::floor(origin.x), std::floor(origin.y)}, lines);
}

}  // namespace dsgd::gui
