#include "gui/model/recording.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "gui/model/layout.h"

namespace dsgd::gui {
namespace {

using SteadyClock = std::chrono::steady_clock;

double seconds_since(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

// Where output pixel i of n starts among `size` input pixels; pixel i covers
// [start(i), start(i + 1)), never empty since n <= size.
int span_start(int i, int n, int size) {
  return static_cast<int>(static_cast<int64_t>(i) * size / n);
}

}  // namespace

Image shrink(const Image& image, double scale) {
  if (scale >= 1) return image;
  const int w = std::max(1, static_cast<int>(std::lround(image.width * scale)));
  const int h = std::max(1, static_cast<int>(std::lround(image.height * scale)));
  Image out{.width = w, .height = h};
  out.rgb.resize(static_cast<size_t>(w) * h * 3);
  for (int oy = 0; oy < h; ++oy) {
    const int y0 = span_start(oy, h, image.height), y1 = span_start(oy + 1, h, image.height);
    for (int ox = 0; ox < w; ++ox) {
      const int x0 = span_start(ox, w, image.width), x1 = span_start(ox + 1, w, image.width);
      uint32_t sum[3] = {0, 0, 0};
      for (int y = y0; y < y1; ++y)
        for (int x = x0; x < x1; ++x)
          for (int c = 0; c < 3; ++c)
            sum[c] += image.rgb[(static_cast<size_t>(y) * image.width + x) * 3 + c];
      const uint32_t count = static_cast<uint32_t>((y1 - y0) * (x1 - x0));
      for (int c = 0; c < 3; ++c)
        out.rgb[(static_cast<size_t>(oy) * w + ox) * 3 + c] =
            static_cast<uint8_t>((sum[c] + count / 2) / count);
    }
  }
  return out;
}

GifRecording::GifRecording(RecordOptions options)
    : options_(std::move(options)), writer_(options_.path) {
  if (options_.delay_ms > 0)
    last_delay_cs_ = std::max(2, static_cast<int>(std::lround(options_.delay_ms / 10.0)));
}

bool GifRecording::wants_frame(double now_s) {
  ++rendered_;
  if (full() || (rendered_ - 1) % std::max(1, options_.every) != 0) return false;
  return !last_taken_s_ || now_s - *last_taken_s_ >= options_.min_interval_s;
}

void GifRecording::add(const Image& frame, double now_s) {
  const auto start = SteadyClock::now();
  Image small = shrink(frame, options_.scale);
  if (held_)
    write_held(now_s);
  else
    first_s_ = now_s;
  held_ = std::move(small);
  last_taken_s_ = now_s;
  ++taken_;
  encode_s_ += seconds_since(start);
}

// Writes the frame held back, shown until `until_s`: its delay rounds the GIF's length so
// far to whole hundredths (GIF's unit), at least 2 (viewers show shorter ones as 10).
void GifRecording::write_held(double until_s) {
  int delay_cs = last_delay_cs_;  // the fixed delay, with --record-delay
  if (options_.delay_ms == 0) {
    const int end_cs = static_cast<int>(std::lround((until_s - first_s_) * 100));
    delay_cs = std::max(2, end_cs - written_cs_);
  }
  writer_.add_frame(*held_, delay_cs);
  written_cs_ += delay_cs;
  last_delay_cs_ = delay_cs;
}

std::string GifRecording::finish() {
  const auto start = SteadyClock::now();
  if (held_) {  // the last frame shows as long as the one before it
    writer_.add_frame(*held_, last_delay_cs_);
    held_.reset();
  }
  writer_.finish();
  encode_s_ += seconds_since(start);
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(options_.path, ec);
  return fmt::format("{} ({} frames, {}x{}, {}, encoded in {:.1f} s)", options_.path, taken_,
                     writer_.width(), writer_.height(),
                     format_bytes(ec ? 0.0 : static_cast<double>(bytes)), encode_s_);
}

}  // namespace dsgd::gui
