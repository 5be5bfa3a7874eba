// dsgd-gui under Xvfb: renders every view for a running 4-node training and for a replayed
// trace (with its metrics), reads the PNGs back and checks each view's region is not blank
// (several distinct colours), the lesson panel for a lesson stepped in Chinese, the message
// log and where the time goes (alone and as tabs), and a straggler's bars in the latter. A
// malformed trace must show an error window, not crash; a run its own simulated crash ended
// is a successful screenshot. --record writes a GIF of a stepped all_reduce, frame by frame.
// A partition (a recorded run's) is drawn while it holds. The dashboard fits at the sizes
// and UI scales of a classroom (dsgd-gui prints "layout: ..." for a window under its minimum
// or a row cut off), and resizing the window (xdotool, found at configure time) tiles it anew.
// Without xvfb-run (found at configure time) every test here reports skipped.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/comm/collectives.h"
#include "core/data/dataset.h"
#include "core/io/trace.h"
#include "core/train/trainer.h"
#include "gui/model/gif.h"
#include "gui/model/layout.h"
#include "gui/model/png.h"
#include "gui/model/tiling.h"
#include "sim/cluster.h"
#include "sim/run_spec.h"
#include "gui_runs.h"
#include "skip.h"

using namespace dsgd;
using namespace dsgd::gui;

namespace {

constexpr int kWidth = 1280, kHeight = 720;

#define SKIP_WITHOUT_XVFB()                                                              \
  DSGD_SKIP_UNLESS("xvfb", std::string_view(DSGD_XVFB_RUN) != "",                        \
                   "xvfb-run was not found at configure time; the window tests need it " \
                   "(apt-get install xvfb, then reconfigure)")

std::filesystem::path out_dir() {
  const auto dir = std::filesystem::temp_directory_path() / "dsgd_gui_headless";
  std::filesystem::create_directories(dir);
  return dir;
}

// The exit status the command under xvfb-run left in `out`.status, or xvfb-run's own when
// the command never ran. xvfb-run's status is not the program's: it exits 5 when removing
// its temporary directory fails after the program succeeded (seen in CI).
int status_of(int system_status, const std::filesystem::path& out) {
  std::ifstream file(out.string() + ".status");
  if (int status = -1; file >> status) return status;
  return WIFEXITED(system_status) ? WEXITSTATUS(system_status) : -1;
}

// Runs dsgd-gui headless, its output into `out`.log; returns its exit status.
int run_headless(const std::string& args, const std::filesystem::path& out, int width = kWidth,
                 int height = kHeight) {
  std::filesystem::remove(out.string() + ".status");
  const std::string command = fmt::format(
      "{} -a -s \"-screen 0 {}x{}x24\" sh -c '\"$@\"; echo $? > \"$0\"' {}.status {} "
      "--headless --width {} --height {} {} > {}.log 2>&1",
      DSGD_XVFB_RUN, width + 100, height + 100, out.string(), DSGD_GUI_BINARY, width, height, args,
      out.string());
  return status_of(std::system(command.c_str()), out);
}

// Runs dsgd-gui headless (in a window of width x height) to write `png`; returns its exit
// status.
int render(const std::string& args, const std::filesystem::path& png, int width = kWidth,
           int height = kHeight) {
  return run_headless(fmt::format("--screenshot {} {}", png.string(), args), png, width, height);
}

std::string log_of(const std::filesystem::path& png) {
  std::ifstream f(png.string() + ".log");
  return {std::istreambuf_iterator<char>(f), {}};
}

// A 4-node training run's trace and metrics, written in process (no CLI needed).
void write_training_trace(const std::string& trace, const std::string& metrics) {
  ChromeTraceWriter writer;
  std::ofstream lines(metrics);
  const Dataset data = load_dataset("synthetic");
  TrainConfig config;
  config.model = ModelSpec::parse("mlp:16");
  config.global_batch = 64;
  config.steps = 12;
  config.allreduce = Algorithm::ring;
  config.eval_every = 4;
  sim::ClusterOptions options{.nodes = 4};
  options.network.link = {.latency_s = 1e-3, .bandwidth_Bps = 125e6};
  options.events = &writer;
  sim::run_cluster(options, [&](Communicator& comm) {
    TrainHooks hooks;
    hooks.on_step = [&](const StepMetrics& m) {
      if (comm.rank() != 0) return;
      lines << fmt::format(
          "{{\"step\":{},\"loss\":{},\"wall_s\":{}{}}}\n", m.step, m.loss, m.wall_s,
          m.test_accuracy ? fmt::format(",\"test_accuracy\":{}", *m.test_accuracy) : "");
    };
    train(comm, data, config, nullptr, hooks);
  });
  writer.write(trace);
}

void check_not_blank(const std::filesystem::path& png, View only) {
  const Image image = read_png(png.string());
  REQUIRE(image.width == kWidth);
  REQUIRE(image.height == kHeight);
  const View views[] = {View::controls, View::topology, View::convergence, View::gradients,
                        View::timeline};
  for (View v : views) {
    if (only != View::all && v != only) continue;
    const Rect r = view_rect(v, only, kWidth, kHeight);
    // Inside the window, below its title bar.
    const int colours =
        distinct_colours(image, static_cast<int>(r.x0) + 4, static_cast<int>(r.y0) + 24,
                         static_cast<int>(r.x1) - 4, static_cast<int>(r.y1) - 4);
    INFO(png.string() << ": view " << to_string(v) << " has " << colours << " colours");
    CHECK(colours >= 4);
  }
}

}  // namespace

TEST_CASE("every view renders for a running 4-node training", "[gui][xvfb]") {
  SKIP_WITHOUT_XVFB();
  const auto dir = out_dir();
  for (View v : {View::all, View::topology, View::convergence, View::timeline, View::gradients,
                 View::controls}) {
    const auto png = dir / fmt::format("live_{}.png", to_string(v));
    const int status = render(fmt::format("--nodes 4 --steps 400 --min-steps 12 --frames 10 "
                                          "--latency 2ms --view {}",
                                          to_string(v)),
                              png);
    INFO(log_of(png));
    REQUIRE(status == 0);
    check_not_blank(png, v);
  }
}

TEST_CASE("every view renders for a replayed trace", "[gui][xvfb]") {
  SKIP_WITHOUT_XVFB();
  const auto dir = out_dir();
  const std::string trace = (dir / "train.json").string(), metrics = (dir / "train.jsonl").string();
  write_training_trace(trace, metrics);
  for (View v : {View::all, View::topology, View::convergence, View::timeline, View::gradients,
                 View::controls}) {
    const auto png = dir / fmt::format("replay_{}.png", to_string(v));
    const int status =
        render(fmt::format("--replay {} --metrics {} --seek 0.5 --frames 5 --view {}", trace,
                           metrics, to_string(v)),
               png);
    INFO(log_of(png));
    REQUIRE(status == 0);
    check_not_blank(png, v);
  }
}

TEST_CASE("a malformed trace shows an error window and exits 2", "[gui][xvfb]") {
  SKIP_WITHOUT_XVFB();
  const auto dir = out_dir();
  const std::string trace = (dir / "broken.json").string();
  std::ofstream(trace) << "{\"traceEvents\": [ {\"ph\": \"X\", ";
  const auto png = dir / "replay_broken.png";
  const int status = render(fmt::format("--replay {} --frames 3", trace), png);
  const std::string log = log_of(png);
  INFO(log);
  CHECK(status == 2);
  CHECK(log.find("invalid JSON") != std::string::npos);
  // The error banner (dark red) runs along the bottom of the window, over no rank.
  const Image image = read_png(png.string());
  // Its left margin, 0.7 of the width wide, centred:
  const uint32_t centre = image.pixel(kWidth * 15 / 100 + 4, kHeight - 12);
  const int r = centre >> 16 & 0xFF, g = centre >> 8 & 0xFF, b = centre & 0xFF;
  CHECK(r > 100);
  CHECK(g < 60);
  CHECK(b < 60);
}

TEST_CASE("a headless screenshot of a run its simulated crash ended is a success", "[gui][xvfb]") {
  SKIP_WITHOUT_XVFB();
  const auto png = out_dir() / "crash.png";
  const int status = render(
      "--nodes 4 --crash 2@3 --steps 50 --latency 100us --min-steps 50 --wait 60 --frames 3", png);
  const std::string log = log_of(png);
  INFO(log);
  CHECK(status == 0);
  CHECK(log.find("the run ended by its simulated faults: ") != std::string::npos);
  CHECK(log.find("rank 2") != std::string::npos);
  CHECK(std::filesystem::file_size(png) > 0);
}

TEST_CASE("the lesson panel renders a lesson stepped in Chinese", "[gui][xvfb][lessons]") {
  SKIP_WITHOUT_XVFB();
  const auto png = out_dir() / "lesson_4_zh.png";
  // Lesson 4 on 4 ranks, 20 messages in: in the middle of its all_reduce section.
  const int status = render("--lesson 4 --lang zh --step-messages 20 --frames 5", png);
  INFO(log_of(png));
  REQUIRE(status == 0);
  const Image image = read_png(png.string());
  REQUIRE(image.width == kWidth);
  REQUIRE(image.height == kHeight);
  for (View v : {View::lesson, View::topology, View::controls, View::timeline}) {
    const Rect r = view_rect(v, View::all, kWidth, kHeight, /*lesson=*/true);
    const int colours =
        distinct_colours(image, static_cast<int>(r.x0) + 4, static_cast<int>(r.y0) + 24,
                         static_cast<int>(r.x1) - 4, static_cast<int>(r.y1) - 4);
    INFO("view " << to_string(v) << " has " << colours << " colours");
    CHECK(colours >= 4);
  }
  // The panel is mostly text: its lower half (the transcript) is not empty either.
  const Rect panel = view_rect(View::lesson, View::all, kWidth, kHeight, true);
  CHECK(distinct_colours(image, static_cast<int>(panel.x0) + 4,
                         static_cast<int>((panel.y0 + panel.y1) / 2),
                         static_cast<int>(panel.x1) - 4, static_cast<int>(panel.y1) - 4) >= 4);
}

TEST_CASE("the message log and where the time goes render alone and as the bottom tabs",
          "[gui][xvfb]") {
  SKIP_WITHOUT_XVFB();
  const auto dir = out_dir();
  struct Shot {
    const char* args;
    View view, only;  // where it is drawn
  };
  const Shot shots[] = {{"--view messages", View::messages, View::messages},
                        {"--view time", View::time, View::time},
                        {"--tab messages", View::timeline, View::all},
                        {"--tab time", View::timeline, View::all}};
  for (const Shot& shot : shots) {
    const auto png = dir / fmt::format("teacher_{}.png", &shot - shots);
    const int status = render(
        fmt::format("--nodes 4 --steps 400 --min-steps 12 --frames 10 --latency 2ms {}", shot.args),
        png);
    INFO(shot.args << "\n" << log_of(png));
    REQUIRE(status == 0);
    const Image image = read_png(png.string());
    const Rect r = view_rect(shot.view, shot.only, kWidth, kHeight);
    // Below the title bar and the tabs.
    CHECK(distinct_colours(image, static_cast<int>(r.x0) + 4, static_cast<int>(r.y0) + 48,
                           static_cast<int>(r.x1) - 4, static_cast<int>(r.y1) - 4) >= 4);
  }
}

// A replayed 4-rank training in model time whose rank 2 computes four times as long: where
// the time goes draws its long compute bar (blue) and the others' waiting for it (red).
TEST_CASE("where the time goes shows a straggler and the others waiting for it", "[gui][xvfb]") {
  SKIP_WITHOUT_XVFB();
  const auto dir = out_dir();
  ChromeTraceWriter writer(
      {.time_base = TimeBase::model, .run_json = sim::run_spec_json(test::straggler_run())});
  test::train_straggler(writer, 6);
  const std::string trace = (dir / "straggler.json").string();
  writer.write(trace);
  const auto png = dir / "replay_straggler_time.png";
  const int status = render(fmt::format("--replay {} --seek 1 --frames 5 --view time", trace), png);
  INFO(log_of(png));
  REQUIRE(status == 0);
  const Image image = read_png(png.string());
  // Per pixel row, how much of the width is compute blue and how much waiting red.
  int straggler_rows = 0, waiting_rows = 0;
  for (int y = 0; y < image.height; ++y) {
    int blue = 0, red = 0;
    for (int x = 0; x < image.width; ++x) {
      const uint32_t p = image.pixel(x, y);
      blue += p == 0x4682DC;  // rgba(70, 130, 220)
      red += p == 0xD72D2D;   // rgba(215, 45, 45)
    }
    straggler_rows += blue > image.width / 2;
    waiting_rows += red > image.width / 3;
  }
  CHECK(straggler_rows > 20);  // one bar
  CHECK(waiting_rows > 60);    // three bars
}

TEST_CASE("a headless recording of a stepped all_reduce holds every frame", "[gui][xvfb][gif]") {
  SKIP_WITHOUT_XVFB();
  const auto gif = out_dir() / "stepped.gif";
  std::filesystem::remove(gif);
  const int status = run_headless(
      fmt::format("--mode allreduce --nodes 4 --step-mode --step-messages 12 --frames 20 "
                  "--record {}",
                  gif.string()),
      gif);
  const std::string log = log_of(gif);
  INFO(log);
  REQUIRE(status == 0);
  CHECK_THAT(log, Catch::Contains("wrote " + gif.string() + " (20 frames, 1280x720"));
  const GifFrames read = read_gif(gif.string());
  REQUIRE(read.frames.size() == 20);
  CHECK(read.width == kWidth);
  CHECK(read.height == kHeight);
  int changed = 0;  // each stepped message moves a packet
  for (size_t i = 1; i < read.frames.size(); ++i)
    changed += read.frames[i].rgb != read.frames[i - 1].rgb;
  CHECK(changed >= 10);
  const Rect r = view_rect(View::topology, View::all, kWidth, kHeight);
  CHECK(distinct_colours(read.frames.back(), static_cast<int>(r.x0) + 4,
                         static_cast<int>(r.y0) + 24, static_cast<int>(r.x1) - 4,
                         static_cast<int>(r.y1) - 4) >= 4);
}

namespace {

// Pixels of the topology view within `tolerance` of `rgb` (0xRRGGBB) in each channel.
int pixels_near(const Image& image, uint32_t rgb, int tolerance) {
  const Rect r = view_rect(View::topology, View::all, kWidth, kHeight);
  int n = 0;
  for (int y = static_cast<int>(r.y0) + 24; y < static_cast<int>(r.y1) - 4; ++y)
    for (int x = static_cast<int>(r.x0) + 4; x < static_cast<int>(r.x1) - 4; ++x) {
      const uint32_t p = image.pixel(x, y);
      bool near = true;
      for (int shift : {0, 8, 16})
        near = near && std::abs(static_cast<int>(p >> shift & 0xFF) -
                                static_cast<int>(rgb >> shift & 0xFF)) <= tolerance;
      n += near;
    }
  return n;
}

}  // namespace

TEST_CASE("a partition is drawn while it holds: cut links in red, the groups ringed",
          "[gui][xvfb]") {
  SKIP_WITHOUT_XVFB();
  // A recorded 4-rank run whose description partitions {0,1} from {2,3} from 0.1 s to
  // 0.3 s, with messages inside each group from 0 to 0.5 s (model time).
  sim::RunSpec run;
  run.cluster.nodes = 4;
  sim::Outage partition{.from_s = 0.1, .until_s = 0.3};
  for (int a : {0, 1})
    for (int b : {2, 3}) {
      partition.links.push_back({a, b});
      partition.links.push_back({b, a});
    }
  run.cluster.network.outages = {partition};
  std::vector<Event> events;
  for (int i = 0; i <= 50; ++i) {
    const double t = 0.01 * i;
    const int src = i % 2 ? 2 : 0, dst = src + 1;
    events.push_back({.kind = EventKind::send_begin,
                      .rank = src,
                      .peer = dst,
                      .tag = 1,
                      .bytes = 64,
                      .model_s = t});
    events.push_back({.kind = EventKind::recv_end,
                      .rank = dst,
                      .peer = src,
                      .tag = 1,
                      .bytes = 64,
                      .model_s = t + 0.005});
  }
  const auto dir = out_dir();
  const std::string trace = (dir / "partition.json").string();
  std::ofstream(trace) << trace_json(
      events, {.time_base = TimeBase::model, .run_json = sim::run_spec_json(run)});
  const auto during = dir / "partition_during.png", after = dir / "partition_after.png";
  REQUIRE(render(fmt::format("--replay {} --seek 0.4 --frames 3", trace), during) == 0);
  REQUIRE(render(fmt::format("--replay {} --seek 0.9 --frames 3", trace), after) == 0);
  const Image in = read_png(during.string()), out = read_png(after.string());
  // The dark theme's cut (255, 70, 70) and the two groups' rings (0, 190, 210), (230, 80, 200).
  for (const uint32_t colour : {0xFF4646u, 0x00BED2u, 0xE650C8u}) {
    INFO(fmt::format("colour {:06x}: {} pixels during, {} after", colour,
                     pixels_near(in, colour, 24), pixels_near(out, colour, 24)));
    CHECK(pixels_near(in, colour, 24) > 100);
    CHECK(pixels_near(out, colour, 24) < 10);
  }
}

namespace {

// The lines dsgd-gui printed about what did not fit ("dsgd-gui: layout: ...").
std::string layout_problems(const std::string& log) {
  std::string out;
  for (size_t at = log.find("layout:"); at != std::string::npos; at = log.find("layout:", at + 1))
    out += log.substr(at, log.find('\n', at) - at) + "\n";
  return out;
}

}  // namespace

TEST_CASE("the dashboard fits at 1280x720 to 1920x1080, UI scale 1 to 2, cutting no label",
          "[gui][xvfb]") {
  SKIP_WITHOUT_XVFB();
  const auto dir = out_dir();
  struct Case {
    int width, height;
    float scale;
    const char* extra;
  };
  std::vector<Case> cases;
  for (auto [w, h] : {std::pair{1280, 720}, {1600, 900}, {1920, 1080}})
    for (float scale : {1.0f, 1.5f, 1.75f, 2.0f})
      cases.push_back({w, h, scale, "--theme light"});
  cases.push_back({1280, 720, 2.0f, "--theme projector --lang zh"});
  cases.push_back({1280, 720, 2.0f, "--theme projector --lesson 4 --step-messages 4"});
  for (const Case& c : cases) {
    const auto png = dir / fmt::format("fit_{}x{}_{}.png", c.width, c.height, c.scale);
    const int status =
        render(fmt::format("--scale {} {} --nodes 4 --latency 100us --min-steps 3 --frames 4",
                           c.scale, c.extra),
               png, c.width, c.height);
    const std::string log = log_of(png);
    INFO(png.string() << " (" << c.extra << "):\n" << log);
    REQUIRE(status == 0);
    CHECK(layout_problems(log).empty());
  }
}

TEST_CASE("the message log, where the time goes and the demo fit, cutting no label",
          "[gui][xvfb]") {
  SKIP_WITHOUT_XVFB();
  const auto dir = out_dir();
  const char* const shows[] = {"--tab messages --min-steps 3", "--tab time --min-steps 3",
                               "--mode allreduce --step-mode --step-messages 5"};
  for (auto [w, h] : {std::pair{1280, 720}, {1600, 900}, {1920, 1080}})
    for (float scale : {1.0f, 1.75f, 2.0f})
      for (size_t i = 0; i < std::size(shows); ++i) {
        const char* const show = shows[i];
        const auto png = dir / fmt::format("fit_teacher_{}x{}_{}_{}.png", w, h, scale, i);
        const int status =
            render(fmt::format("--scale {} --theme light --nodes 4 --latency 100us --frames 4 {}",
                               scale, show),
                   png, w, h);
        const std::string log = log_of(png);
        INFO(png.string() << " (" << show << "):\n" << log);
        REQUIRE(status == 0);
        CHECK(layout_problems(log).empty());
      }
}

TEST_CASE("a display too small for the dashboard says which window does not fit", "[gui][xvfb]") {
  SKIP_WITHOUT_XVFB();
  const auto png = out_dir() / "fit_too_small.png";
  const int status = render("--scale 2 --frames 3", png, 640, 400);
  const std::string log = log_of(png);
  INFO(log);
  REQUIRE(status == 0);
  CHECK(layout_problems(log).find("under its minimum") != std::string::npos);
}

TEST_CASE("resizing the window tiles the views anew", "[gui][xvfb]") {
  SKIP_WITHOUT_XVFB();
  DSGD_SKIP_UNLESS("xdotool", std::string_view(DSGD_XDOTOOL) != "",
                   "xdotool was not found at configure time (apt-get install xdotool)");
  const auto png = out_dir() / "resized.png";
  // Opened at 1280x720, resized to 1600x900 by the X server while it waits for steps that
  // never come (it renders on until --wait runs out), then the screenshot.
  const std::string command = fmt::format(
      "{} -a -s \"-screen 0 1920x1080x24\" sh -c '{} --headless --width 1280 --height 720 "
      "--screenshot {} --steps 100000 --min-steps 100000 --wait 6 --frames 2 & "
      "{} search --sync --name \"dsgd - distributed SGD\" windowsize 1600 900; wait $!; "
      "echo $? > {}.status' > {}.log 2>&1",
      DSGD_XVFB_RUN, DSGD_GUI_BINARY, png.string(), DSGD_XDOTOOL, png.string(), png.string());
  std::filesystem::remove(png.string() + ".status");
  const int status = status_of(std::system(command.c_str()), png);
  const std::string log = log_of(png);
  INFO(log);
  REQUIRE(status == 0);
  const Image image = read_png(png.string());
  CHECK(image.width == 1600);
  CHECK(image.height == 900);
  CHECK(layout_problems(log).empty());
  // The timeline reaches the new bottom right corner: not blank there.
  CHECK(distinct_colours(image, 1200, 700, 1596, 896) >= 4);
}
