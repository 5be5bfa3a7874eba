// Exporter: what the window writes for a teacher's slides — a PNG of the window or of one
// of its views (cut out of the frame), and animated GIFs (recording.h): one the command line
// asked for (--record), and those the Controls' "Record GIF" button starts and stops. The
// buttons' files are named dsgd-<local time>[-view].png / .gif in `directory`. The window
// calls it after rendering each frame, with a way to read that frame back.
// No OpenGL and no printing: tests hand it images, the window prints what it reports.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gui/model/commands.h"
#include "gui/model/layout.h"
#include "gui/model/png.h"
#include "gui/model/recording.h"
#include "gui/model/snapshot.h"
#include "gui/model/tiling.h"

namespace dsgd::gui {

// Where each view's window was in the last frame, in pixels (views.h fills it).
using ViewWindows = std::vector<std::pair<View, Rect>>;

class Exporter {
 public:
  using ReadFrame = std::function<Image()>;
  // A line for the user (`error`: on stderr): what was written, or why not.
  using Report = std::function<void(const std::string& line, bool error)>;

  // `record` (--record) starts recording at the first frame: DataError when its path cannot
  // be written. `button` is what the Record GIF button records with (its path is ignored).
  Exporter(std::optional<RecordOptions> record, RecordOptions button, std::string directory,
           Report report);

  // After a frame was rendered: acts on its save_png and record_gif commands and hands the
  // frame to the recording when it wants one. `now_s`: real time.
  void after_render(const std::vector<Command>& commands, const ViewWindows& windows, double now_s,
                    const ReadFrame& read_frame);
  // Writes a recording still going (the window is closing).
  void finish();

  bool recording() const { return recording_ != nullptr; }
  bool failed() const { return failed_; }  // something could not be written
  // For the Controls: recording or not, the frames so far, where the last file went.
  ExportView status(const ViewWindows& windows) const;

 private:
  void save_png(View view, const ViewWindows& windows, const ReadFrame& read_frame);
  void start_recording();
  void stop_recording();
  void say(const std::string& line, bool error);
  std::string recording_message() const;  // "recording /dir/x.gif (900 frames at most)"
  // `directory`/dsgd-<local time><suffix>.<extension>, -2, -3 ... when that exists.
  std::string new_file_name(const std::string& suffix, const std::string& extension) const;

  std::unique_ptr<GifRecording> recording_;
  RecordOptions button_;
  std::string directory_;
  Report report_;
  std::string message_;
  bool failed_ = false;
};

// The part of `image` inside `rect`, clipped to the image.
Image crop(const Image& image, const Rect& rect);

}  // namespace dsgd::gui
