#include "gui/model/exporter.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>

#include <fmt/format.h>

#include "core/errors.h"

namespace dsgd::gui {

// The Record GIF button stops by itself after this many frames (30 s at 30 a second).
constexpr int kButtonMaxFrames = 900;

Image crop(const Image& image, const Rect& rect) {
  const int x0 = std::clamp(static_cast<int>(std::lround(rect.x0)), 0, image.width);
  const int y0 = std::clamp(static_cast<int>(std::lround(rect.y0)), 0, image.height);
  const int x1 = std::clamp(static_cast<int>(std::lround(rect.x1)), x0, image.width);
  const int y1 = std::clamp(static_cast<int>(std::lround(rect.y1)), y0, image.height);
  Image out{.width = x1 - x0, .height = y1 - y0};
  out.rgb.resize(static_cast<size_t>(out.width) * out.height * 3);
  for (int y = y0; y < y1; ++y)
    std::memcpy(out.rgb.data() + static_cast<size_t>(y - y0) * out.width * 3,
                image.rgb.data() + (static_cast<size_t>(y) * image.width + x0) * 3,
                static_cast<size_t>(out.width) * 3);
  return out;
}

Exporter::Exporter(std::optional<RecordOptions> record, RecordOptions button, std::string directory,
                   Report report)
    : button_(std::move(button)), directory_(std::move(directory)), report_(std::move(report)) {
  if (record) {
    recording_ = std::make_unique<GifRecording>(std::move(*record));
    message_ = recording_message();
  }
  if (button_.max_frames <= 0) button_.max_frames = kButtonMaxFrames;
}

std::string Exporter::recording_message() const {
  const RecordOptions& o = recording_->options();
  return fmt::format("recording {} ({} frames at most)",
                     std::filesystem::absolute(o.path).lexically_normal().string(), o.max_frames);
}

void Exporter::say(const std::string& line, bool error) {
  message_ = line;
  failed_ = failed_ || error;
  if (report_) report_(line, error);
}

std::string Exporter::new_file_name(const std::string& suffix, const std::string& extension) const {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &local);
  // Absolute: the Controls say where the file went.
  const std::filesystem::path dir =
      std::filesystem::absolute(directory_.empty() ? "." : directory_).lexically_normal();
  std::filesystem::path path = dir / fmt::format("dsgd-{}{}.{}", stamp, suffix, extension);
  for (int n = 2; std::filesystem::exists(path); ++n)
    path = dir / fmt::format("dsgd-{}{}-{}.{}", stamp, suffix, n, extension);
  return path.string();
}

void Exporter::save_png(View view, const ViewWindows& windows, const ReadFrame& read_frame) {
  const auto window =
      std::find_if(windows.begin(), windows.end(), [&](const auto& w) { return w.first == view; });
  if (view != View::all && window == windows.end()) {
    say(fmt::format("the {} view is not on screen: nothing saved", to_string(view)), true);
    return;
  }
  const std::string path =
      new_file_name(view == View::all ? "" : fmt::format("-{}", to_string(view)), "png");
  try {
    Image image = read_frame();
    if (view != View::all) image = crop(image, window->second);
    write_png(path, image);
    say(fmt::format("saved {} ({}x{})", path, image.width, image.height), false);
  } catch (const Error& e) {
    say(e.what(), true);
  }
}

void Exporter::start_recording() {
  RecordOptions options = button_;
  options.path = new_file_name("", "gif");
  try {
    recording_ = std::make_unique<GifRecording>(std::move(options));
    message_ = recording_message();
  } catch (const Error& e) {
    say(e.what(), true);
  }
}

void Exporter::stop_recording() {
  std::unique_ptr<GifRecording> recording = std::move(recording_);
  try {
    say("wrote " + recording->finish(), false);
  } catch (const Error& e) {
    say(e.what(), true);
  }
}

void Exporter::after_render(const std::vector<Command>& commands, const ViewWindows& windows,
                            double now_s, const ReadFrame& read_frame) {
  for (const Command& c : commands) {
    if (c.kind == CommandKind::save_png) save_png(static_cast<View>(c.index), windows, read_frame);
    if (c.kind == CommandKind::record_gif) {
      if (recording_)
        stop_recording();
      else
        start_recording();
    }
  }
  if (!recording_ || !recording_->wants_frame(now_s)) return;
  try {
    recording_->add(read_frame(), now_s);
  } catch (const Error& e) {
    recording_.reset();  // its temporary file goes with it
    say(e.what(), true);
    return;
  }
  if (recording_->full()) stop_recording();
}

void Exporter::finish() {
  if (recording_) stop_recording();
}

ExportView Exporter::status(const ViewWindows& windows) const {
  ExportView s{.recording = recording_ != nullptr, .message = message_};
  for (const auto& [view, rect] : windows)
    s.views.push_back(view);
  return s;
}

}  // namespace dsgd::gui
