#include "gui/model/contrast.h"

#include <algorithm>
#include <cmath>

namespace dsgd::gui {
namespace {

int channel(Rgba c, int shift) {
  return static_cast<int>(c >> shift & 0xFF);
}

double linear(int value) {  // sRGB to linear light
  const double c = value / 255.0;
  return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
}

Rgba mix(Rgba a, Rgba b, double t) {
  const auto m = [&](int shift) {
    return static_cast<int>(std::lround(channel(a, shift) * (1 - t) + channel(b, shift) * t));
  };
  return rgba(m(0), m(8), m(16), channel(a, 24));
}

}  // namespace

double relative_luminance(Rgba c) {
  return 0.2126 * linear(channel(c, 0)) + 0.7152 * linear(channel(c, 8)) +
         0.0722 * linear(channel(c, 16));
}

double contrast_ratio(Rgba a, Rgba b) {
  const double la = relative_luminance(a), lb = relative_luminance(b);
  return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

Rgba text_colour_on(Rgba background) {
  const Rgba black = rgba(0, 0, 0), white = rgba(255, 255, 255);
  return contrast_ratio(black, background) >= contrast_ratio(white, background) ? black : white;
}

Rgba over(Rgba top, Rgba bottom) {
  const Rgba opaque_bottom = (bottom & 0x00FFFFFFu) | 0xFF000000u;
  return (mix(opaque_bottom, top, channel(top, 24) / 255.0) & 0x00FFFFFFu) | 0xFF000000u;
}

Rgba legible_fill(Rgba fill, Rgba against, double min_ratio) {
  const Rgba away = relative_luminance(against) > 0.18 ? rgba(0, 0, 0) : rgba(255, 255, 255);
  for (int step = 0; step <= 20; ++step) {
    const Rgba candidate = mix(fill, away, step / 20.0);
    if (contrast_ratio(candidate, against) >= min_ratio) return candidate;
  }
  return away;
}

}  // namespace dsgd::gui
