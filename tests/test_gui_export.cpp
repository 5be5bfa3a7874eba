// dsgd-gui's exports without OpenGL: the GIF writer (read back with giflib's DGifSlurp:
// frame count, size, delays, colours), its palette on a frame of more than 256 colours, no
// file left behind when writing fails or is abandoned; the recording's pace (delays from
// real time, thinning, the frame cap, shrinking, a resized window); the Exporter's PNG of one view
// and its Record GIF toggle; and the --record flags.
#include <catch2/catch.hpp>

#include <gif_lib.h>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "cli_runner.h"
#include "core/errors.h"
#include "gui/model/exporter.h"
#include "gui/model/gif.h"
#include "gui/model/options.h"
#include "gui/model/recording.h"

using namespace dsgd;
using namespace dsgd::gui;
using dsgd::test::TempDir;

namespace {

Image filled(int width, int height, uint32_t rgb) {
  Image image{.width = width, .height = height};
  for (int i = 0; i < width * height; ++i)
    image.rgb.insert(image.rgb.end(), {static_cast<uint8_t>(rgb >> 16),
                                       static_cast<uint8_t>(rgb >> 8), static_cast<uint8_t>(rgb)});
  return image;
}

void paint(Image& image, int x0, int y0, int x1, int y1, uint32_t rgb) {
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) {
      uint8_t* p = image.rgb.data() + (static_cast<size_t>(y) * image.width + x) * 3;
      p[0] = rgb >> 16, p[1] = rgb >> 8 & 0xFF, p[2] = rgb & 0xFF;
    }
}

// The largest difference of one channel between two colours.
int channel_error(uint32_t a, uint32_t b) {
  int worst = 0;
  for (int shift : {0, 8, 16})
    worst = std::max(
        worst, std::abs(static_cast<int>(a >> shift & 0xFF) - static_cast<int>(b >> shift & 0xFF)));
  return worst;
}

// A GIF file opened and read whole by giflib itself.
struct Slurped {
  std::unique_ptr<GifFileType, void (*)(GifFileType*)> gif{nullptr, [](GifFileType* g) {
                                                             int error = 0;
                                                             DGifCloseFile(g, &error);
                                                           }};
  explicit Slurped(const std::string& path) {
    int error = 0;
    gif.reset(DGifOpenFileName(path.c_str(), &error));
    REQUIRE(gif);
    REQUIRE(DGifSlurp(gif.get()) == GIF_OK);
  }
  int delay_cs(int i) const {
    GraphicsControlBlock control{};
    REQUIRE(DGifSavedExtensionToGCB(gif.get(), i, &control) == GIF_OK);
    return control.DelayTime;
  }
};

}  // namespace

TEST_CASE("a GIF of three frames reads back through giflib with its size, delays and colours",
          "[gui][gif]") {
  TempDir dir;
  const std::string path = dir / "three.gif";
  Image frame = filled(40, 30, 0x1E1E24);  // the dark theme's background
  paint(frame, 5, 5, 15, 12, 0xFF8C00);    // an orange packet
  {
    GifWriter writer(path);
    writer.add_frame(frame, 10);
    paint(frame, 20, 10, 26, 16, 0x4296FA);  // a blue node appears
    writer.add_frame(frame, 25);
    writer.add_frame(frame, 7);  // nothing changed
    CHECK(writer.frames() == 3);
    writer.finish();
  }
  const Slurped gif(path);
  REQUIRE(gif.gif->ImageCount == 3);
  CHECK(gif.gif->SWidth == 40);
  CHECK(gif.gif->SHeight == 30);
  CHECK(gif.gif->SavedImages[0].ImageDesc.Width == 40);
  // Later frames hold only what changed.
  CHECK(gif.gif->SavedImages[1].ImageDesc.Left == 20);
  CHECK(gif.gif->SavedImages[1].ImageDesc.Top == 10);
  CHECK(gif.gif->SavedImages[1].ImageDesc.Width == 6);
  CHECK(gif.gif->SavedImages[2].ImageDesc.Width == 1);
  CHECK(gif.delay_cs(0) == 10);
  CHECK(gif.delay_cs(1) == 25);
  CHECK(gif.delay_cs(2) == 7);

  const GifFrames read = read_gif(path);
  REQUIRE(read.frames.size() == 3);
  CHECK(read.frames[0].pixel(0, 0) == 0x1E1E24);  // few colours: each one exact
  CHECK(read.frames[0].pixel(8, 8) == 0xFF8C00);
  CHECK(read.frames[0].pixel(22, 12) == 0x1E1E24);
  CHECK(read.frames[1].pixel(22, 12) == 0x4296FA);
  CHECK(read.frames[2].pixel(8, 8) == 0xFF8C00);
  CHECK(read.frames[2].rgb == frame.rgb);
}

TEST_CASE("a GIF frame of thousands of colours keeps every colour close and a small hue exact",
          "[gui][gif]") {
  TempDir dir;
  Image frame = filled(128, 96, 0);
  for (int y = 0; y < 96; ++y)  // 12288 colours: a smooth red-green-blue ramp
    for (int x = 0; x < 128; ++x)
      paint(frame, x, y, x + 1, y + 1,
            static_cast<uint32_t>(x * 2) << 16 | static_cast<uint32_t>(y * 2) << 8 |
                static_cast<uint32_t>((x + y) % 256));
  paint(frame, 60, 40, 64, 44, 0xC0102A);  // 16 pixels of one colour, far from the ramp's
  {
    GifWriter writer(dir / "ramp.gif");
    writer.add_frame(frame, 10);
    writer.finish();
  }
  const Image back = read_gif(dir / "ramp.gif").frames.at(0);
  int worst = 0;
  for (int y = 0; y < 96; ++y)
    for (int x = 0; x < 128; ++x)
      worst = std::max(worst, channel_error(back.pixel(x, y), frame.pixel(x, y)));
  INFO("largest channel error " << worst);
  CHECK(worst <= 40);
  CHECK(channel_error(back.pixel(61, 41), 0xC0102A) <= 8);
}

TEST_CASE("a GIF keeps its first frame's size when the window is resized", "[gui][gif]") {
  TempDir dir;
  {
    GifWriter writer(dir / "resized.gif");
    writer.add_frame(filled(20, 10, 0x102030), 10);
    writer.add_frame(filled(30, 6, 0xA0B0C0), 10);  // wider (cut) and lower (the rest black)
    writer.finish();
  }
  const GifFrames read = read_gif(dir / "resized.gif");
  REQUIRE(read.frames.size() == 2);
  CHECK(read.width == 20);
  CHECK(read.height == 10);
  CHECK(read.frames[1].pixel(19, 5) == 0xA0B0C0);
  CHECK(read.frames[1].pixel(19, 6) == 0x000000);
}

TEST_CASE("a GIF that cannot be written, or is abandoned, leaves no file behind", "[gui][gif]") {
  TempDir dir;
  const std::string missing = dir / "no_such_dir/out.gif";
  try {
    GifWriter writer(missing);
    FAIL("no error for " << missing);
  } catch (const DataError& e) {
    CHECK_THAT(e.what(), Catch::Contains(missing));
    CHECK(e.exit_code() == 2);
  }
  {
    GifWriter writer(dir / "abandoned.gif");
    writer.add_frame(filled(8, 8, 0x102030), 10);
  }  // destroyed without finish()
  {
    GifWriter writer(dir / "empty.gif");
    CHECK_THROWS_AS(writer.finish(), DataError);  // no frame
  }
  CHECK(dir.listing().empty());
}

TEST_CASE("a recording shows each frame for the real time until the next", "[gui][gif]") {
  TempDir dir;
  GifRecording recording({.path = dir / "pace.gif"});
  const Image frame = filled(16, 8, 0x000000);
  for (double t : {0.0, 0.1, 0.25, 0.333, 0.4}) {
    REQUIRE(recording.wants_frame(t));
    Image f = frame;
    paint(f, 0, 0, static_cast<int>(t * 30) + 1, 1, 0xFFFFFF);
    recording.add(f, t);
  }
  CHECK_THAT(recording.finish(), Catch::Contains("5 frames, 16x8"));
  const Slurped gif(dir / "pace.gif");
  REQUIRE(gif.gif->ImageCount == 5);
  // 10 + 15 + 8 + 7 hundredths: the GIF's length rounds to real time, the last repeats.
  CHECK(gif.delay_cs(0) == 10);
  CHECK(gif.delay_cs(1) == 15);
  CHECK(gif.delay_cs(2) == 8);
  CHECK(gif.delay_cs(3) == 7);
  CHECK(gif.delay_cs(4) == 7);
}

TEST_CASE("a recording thins, shrinks, takes a fixed delay and stops at its frame cap",
          "[gui][gif]") {
  TempDir dir;
  GifRecording recording({.path = dir / "thin.gif",
                          .max_frames = 3,
                          .every = 2,
                          .min_interval_s = 0.05,
                          .scale = 0.5,
                          .delay_ms = 300});
  std::vector<int> taken;
  for (int frame = 0; frame < 12 && !recording.full(); ++frame) {
    const double t = frame * 0.02;
    if (!recording.wants_frame(t)) continue;
    taken.push_back(frame);
    recording.add(filled(20, 10, 0x808080 + frame), t);
  }
  // One frame in 2 (0, 2, 4 ...), none within 0.05 s of the last: 0, 4, 8.
  CHECK(taken == std::vector<int>{0, 4, 8});
  CHECK(recording.full());
  recording.finish();
  const Slurped gif(dir / "thin.gif");
  REQUIRE(gif.gif->ImageCount == 3);
  CHECK(gif.gif->SWidth == 10);
  CHECK(gif.gif->SHeight == 5);
  for (int i = 0; i < 3; ++i)
    CHECK(gif.delay_cs(i) == 30);
}

TEST_CASE("shrink averages the pixels each output pixel covers", "[gui][gif]") {
  Image image = filled(4, 2, 0x000000);
  paint(image, 0, 0, 1, 2, 0xFFFFFF);  // the left column white
  const Image half = shrink(image, 0.5);
  REQUIRE(half.width == 2);
  REQUIRE(half.height == 1);
  CHECK(half.pixel(0, 0) == 0x808080);
  CHECK(half.pixel(1, 0) == 0x000000);
  CHECK(shrink(image, 1.0).rgb == image.rgb);
}

TEST_CASE("the exporter saves a PNG of one view and records a GIF on the button", "[gui][gif]") {
  TempDir dir;
  std::vector<std::string> lines;
  Exporter exporter(std::nullopt, RecordOptions{}, dir.path().string(),
                    [&](const std::string& line, bool) { lines.push_back(line); });
  Image frame = filled(100, 80, 0x202020);
  paint(frame, 10, 20, 60, 50, 0x3070F0);
  const ViewWindows windows = {{View::controls, Rect{0, 0, 10, 80}},
                               {View::topology, Rect{10, 20, 60, 50}}};
  const auto read_frame = [&] { return frame; };
  const auto command = [](CommandKind kind, View view = View::all) {
    return std::vector<Command>{Command{.kind = kind, .index = static_cast<int>(view)}};
  };

  exporter.after_render(command(CommandKind::save_png, View::topology), windows, 0, read_frame);
  exporter.after_render(command(CommandKind::save_png, View::timeline), windows, 0, read_frame);
  CHECK(exporter.failed());  // the timeline is not on screen
  exporter.after_render(command(CommandKind::record_gif), windows, 0.0, read_frame);
  CHECK(exporter.status(windows).recording);
  for (int i = 1; i <= 3; ++i) {
    paint(frame, i, 0, i + 1, 1, 0xFFFFFF);
    exporter.after_render({}, windows, i * 0.05, read_frame);
  }
  exporter.after_render(command(CommandKind::record_gif), windows, 0.2, read_frame);
  CHECK_FALSE(exporter.recording());
  REQUIRE(lines.size() == 3);
  INFO(lines[0] << "\n" << lines[1] << "\n" << lines[2]);
  CHECK_THAT(lines[0], Catch::StartsWith("saved ") && Catch::Contains("-topology.png (50x30)"));
  CHECK_THAT(lines[1], Catch::Contains("timeline view is not on screen"));
  CHECK_THAT(lines[2], Catch::StartsWith("wrote ") && Catch::Contains(".gif (4 frames, 100x80"));
  CHECK(exporter.status(windows).message == lines[2]);
  CHECK(exporter.status(windows).views == std::vector<View>{View::controls, View::topology});

  int pngs = 0, gifs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    const std::string name = entry.path().filename().string();
    CHECK_THAT(name, Catch::StartsWith("dsgd-"));
    if (entry.path().extension() == ".png") {
      ++pngs;
      const Image view = read_png(entry.path().string());
      CHECK(view.width == 50);
      CHECK(view.pixel(0, 0) == 0x3070F0);
    }
    if (entry.path().extension() == ".gif") {
      ++gifs;
      CHECK(read_gif(entry.path().string()).frames.size() == 4);
    }
  }
  CHECK(pngs == 1);
  CHECK(gifs == 1);
}

TEST_CASE("the --record flags and their limits", "[gui][gif]") {
  const auto parse = [](std::vector<std::string> args) { return parse_gui_options(args); };
  const GuiOptions o = parse({"--record", "out.gif", "--frames", "40", "--record-every", "2",
                              "--record-scale", "0.5", "--record-delay", "250", "--headless"});
  CHECK(o.record.path == "out.gif");
  CHECK(o.record.max_frames == 40);
  CHECK(o.record.every == 2);
  CHECK(o.record.scale == 0.5);
  CHECK(o.record.delay_ms == 250);
  CHECK(o.record.min_interval_s == 0);  // headless: every frame rendered is a state
  CHECK(parse({"--record", "out.gif"}).record.min_interval_s > 0);  // a window: at most 30/s
  CHECK(parse({}).record.path.empty());
  CHECK_THROWS_WITH(parse({"--record", "out.png"}), Catch::Contains("--record out.png"));
  CHECK_THROWS_WITH(parse({"--record", "a.gif", "--record-scale", "2"}),
                    Catch::Contains("--record-scale"));
  CHECK_THROWS_WITH(parse({"--record", "a.gif", "--record-every", "0"}),
                    Catch::Contains("--record-every"));
  CHECK_THROWS_WITH(parse({"--headless"}), Catch::Contains("--record FILE.gif"));
}
