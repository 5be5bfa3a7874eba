// GifRecording: which rendered frames go into an animated GIF and for how long each shows.
// It keeps one rendered frame in `every`, none sooner than `min_interval_s` after the last
// (a window at 60 Hz records at most 30 a second), shrinks each by `scale`, stops after
// `max_frames`, and shows each frame for the real time until the next one was taken (or a
// fixed delay), so the GIF plays at the pace the window did. Not the encoder (gif.h), and
// no OpenGL: the window reads each frame back and hands it over.
#pragma once

#include <optional>
#include <string>

#include "gui/model/gif.h"
#include "gui/model/png.h"

namespace dsgd::gui {

struct RecordOptions {
  std::string path;           // the GIF (--record)
  int max_frames = 0;         // frames in the GIF before it is written; 0 = until finish()
  int every = 1;              // keep one rendered frame in `every` (--record-every)
  double min_interval_s = 0;  // and none sooner than this after the last one kept
  double scale = 1;           // 0.1 .. 1: each frame shrunk by this (--record-scale)
  int delay_ms = 0;           // each frame's delay; 0 = the real time between frames
};

class GifRecording {
 public:
  // DataError when options.path cannot be written (nothing is left behind).
  explicit GifRecording(RecordOptions options);

  // Counts a rendered frame; true when it is to be read back and handed to add().
  bool wants_frame(double now_s);
  void add(const Image& frame, double now_s);  // DataError when the file cannot be written
  // max_frames reached: finish() it.
  bool full() const { return options_.max_frames > 0 && taken_ >= options_.max_frames; }
  // Writes the GIF (DataError when it cannot, or no frame was taken) and says what it wrote:
  // "out.gif (40 frames, 960x540, 1.2 MB, encoded in 0.8 s)".
  std::string finish();

  const RecordOptions& options() const { return options_; }
  int frames() const { return taken_; }

 private:
  void write_held(double until_s);

  RecordOptions options_;
  GifWriter writer_;
  int rendered_ = 0, taken_ = 0;
  std::optional<double> last_taken_s_;
  std::optional<Image> held_;  // the last frame taken: its delay is known at the next one
  double first_s_ = 0;         // when the first frame was taken
  int written_cs_ = 0;         // the GIF's length so far; delays round against it, no drift
  int last_delay_cs_ = 10;     // the fixed delay, or the last one written
  double encode_s_ = 0;        // time spent shrinking and encoding
};

// `image` shrunk by `scale` (0 < scale <= 1), each pixel the average of those it covers.
Image shrink(const Image& image, double scale);

}  // namespace dsgd::gui
