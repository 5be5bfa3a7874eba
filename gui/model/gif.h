// GifWriter: writes an animated GIF through giflib (Debian's libgif), one frame at a time,
// into a temporary file that finish() renames over the destination: a failed or abandoned
// recording leaves no half-written file. Each frame carries its own 256-colour palette
// (exact for a UI's few flat colours) and only the rectangle that changed since the last.
// read_gif decodes one back (DGifSlurp), for tests and for looking at frames.
// Not a recorder: when to take a frame and how long it shows is recording.h's.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/io/atomic_file.h"
#include "gui/model/png.h"

struct GifFileType;

namespace dsgd::gui {

class GifWriter {
 public:
  // Creates the temporary file next to `path`: DataError when its directory is missing or
  // not writable.
  explicit GifWriter(std::string path);
  ~GifWriter();  // without finish(): removes the temporary, writes nothing
  GifWriter(const GifWriter&) = delete;
  GifWriter& operator=(const GifWriter&) = delete;

  // Appends a frame shown for `delay_cs` hundredths of a second. The first frame sets the
  // GIF's size; later ones are clipped to it. DataError when the file cannot be written.
  void add_frame(const Image& frame, int delay_cs);
  // Writes the trailer and renames the temporary over the path. DataError with no frame.
  void finish();

  const std::string& path() const { return file_.path(); }
  int frames() const { return frames_; }
  int width() const { return previous_.width; }
  int height() const { return previous_.height; }

 private:
  void open(int width, int height);
  void put_frame(const Image& frame, int x0, int y0, int x1, int y1, int delay_cs);
  [[noreturn]] void fail(const char* what) const;

  AtomicFile file_;
  GifFileType* gif_ = nullptr;
  Image previous_;  // the last frame as written (clipped), to find what changed
  int frames_ = 0;
};

// A GIF read back: every frame drawn over the ones before, as a viewer shows it.
struct GifFrames {
  int width = 0, height = 0;
  std::vector<Image> frames;
  std::vector<int> delays_cs;
};
// DataError when the file is missing or not a GIF. Holds every frame: for small files.
GifFrames read_gif(const std::string& path);

}  // namespace dsgd::gui
