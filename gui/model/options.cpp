#include "gui/model/options.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "core/errors.h"
#include "core/io/classroom_wire.h"
#include "gui/model/classroom.h"
#include "lessons/lesson.h"
#include "sim/cluster.h"
#include "sim/handshake.h"
#include "sim/run_flags.h"

namespace dsgd::gui {

namespace {

// What is shown and how: everything but the run's own flags (sim/run_flags.h).
struct WindowFlags {
  std::string mode = "train", algorithm, theme = "dark", view = "all", lang = "en";
  std::string tab = "timeline";
};

void add_window_flags(CLI::App& app, GuiOptions& o, WindowFlags& w) {
  app.add_option("--replay", o.replay, "Replay a Chrome trace written by `dsgd train --trace`");
  app.add_option("--metrics", o.replay_metrics, "Loss curve for the replay (metrics JSONL)");
  app.add_option("--compare", o.compare,
                 "Overlay the runs of `dsgd compare --json FILE` in the convergence view");
  app.add_option("--watch", o.watch,
                 "Show the runs that stream to this port as they happen (dsgd train --monitor "
                 "HOST:PORT); PORT listens on 127.0.0.1, HOST:PORT on that address")
      ->type_name("[HOST:]PORT");
  app.add_option("--token", o.token,
                 "--watch: accept only runs with this job token; --classroom: the token "
                 "students join with (default: six letters made up now)")
      ->envname("DSGD_TOKEN");
  app.add_flag("--classroom", o.classroom,
               "Host a class: students' laptops join (dsgd node --rendezvous THIS:PORT) and "
               "the window starts runs on them and shows them");
  app.add_option("--port", o.classroom_port,
                 "--classroom: the port students join on (the next two: the window's watch, "
                 "and the run's rendezvous on one laptop)")
      ->capture_default_str();
  app.add_option("--listen", o.classroom_host,
                 "--classroom: the address to accept students on (default every address)")
      ->capture_default_str();
  app.add_option("--start-when", o.start_when,
                 "--classroom, headless: start a training run (or --lesson N) once this many "
                 "have joined");
  app.add_option("--lesson", o.lesson,
                 "Open lesson N (dsgd lesson list) in step mode; with --classroom, the one the "
                 "panel starts on the laptops (headless, with --start-when: stepped to its end "
                 "and its transcript printed)");
  app.add_option("--lang", w.lang, "Language of the window and the lessons: en or zh (简体中文)");
  app.add_option("--mode", w.mode, "train | allreduce (the all_reduce demo)");
  app.add_option("--algorithm", w.algorithm, "The same as --allreduce");
  app.add_option("--speed", o.sim.speed, "Network clock speed, 0.001 to 1000 (0.1 = slow motion)");
  app.add_flag("--step-mode", o.sim.step_mode, "Start with every message held until stepped");
  app.add_option("--view", w.view,
                 "all | topology | convergence | timeline | gradients | controls | lesson | "
                 "messages | time");
  app.add_option("--tab", w.tab, "The dashboard's bottom tab: timeline | messages | time");
  app.add_option("--theme", w.theme, "dark | light | projector");
  app.add_option("--scale", o.view_settings.ui_scale, "UI scale (projector: 1.5 to 2)");
  app.add_option("--font", o.font, "Font file with CJK glyphs");
  app.add_flag("--chinese", o.view_settings.chinese, "The same as --lang zh");
  app.add_option("--width", o.width, "Window width");
  app.add_option("--height", o.height, "Window height");
  app.add_flag("--headless", o.headless, "Render --frames frames and write --screenshot");
  app.add_option("--frames", o.frames, "Headless: frames to render; --record: frames in the GIF");
  app.add_option("--screenshot", o.screenshot, "Headless: PNG to write");
  app.add_option("--min-steps", o.min_steps, "Headless: wait for this many steps first");
  app.add_option("--step-messages", o.step_messages, "Headless: step this many messages first");
  app.add_option("--seek", o.seek, "Replay: cursor at this fraction of the trace (0..1), paused");
  app.add_option("--wait", o.timeout_s, "Headless: seconds to wait for --min-steps");
}

void add_record_flags(CLI::App& app, RecordOptions& r) {
  app.add_option("--record", r.path,
                 "Record --frames frames into an animated GIF (with or without --headless)");
  app.add_option("--record-every", r.every, "Record: keep one rendered frame in K");
  app.add_option("--record-scale", r.scale, "Record: shrink each frame by this (0.1 to 1)");
  app.add_option("--record-delay", r.delay_ms,
                 "Record: show each frame this many ms (default: the real time between them)");
}

// A window records at most 30 frames a second (a GIF needs no more); headless, every frame
// rendered is a state to show.
void read_record_flags(GuiOptions& o) {
  RecordOptions& r = o.record;
  if (!r.path.empty() && !r.path.ends_with(".gif"))
    throw UsageError(fmt::format("--record {}: give a file name ending in .gif", r.path));
  if (r.every < 1) throw UsageError("--record-every: at least 1");
  if (r.scale < 0.1 || r.scale > 1) throw UsageError("--record-scale: use 0.1 to 1");
  if (r.delay_ms < 0 || r.delay_ms > 600000)
    throw UsageError("--record-delay: use 0 (real time) to 600000 ms");
  r.max_frames = o.frames;
  r.min_interval_s = o.headless ? 0.0 : 1.0 / 30;
}

Theme parse_theme(const std::string& theme) {
  if (theme == "dark") return Theme::dark;
  if (theme == "light") return Theme::light;
  if (theme == "projector") return Theme::projector;
  throw UsageError(fmt::format("--theme {}: use dark, light or projector", theme));
}

void check_classroom_flags(GuiOptions& o) {
  if (!o.classroom) {
    if (o.start_when > 0) throw UsageError("--start-when goes with --classroom");
    return;
  }
  if (!o.watch.empty() || !o.replay.empty())
    throw UsageError("--classroom shows the class's runs: drop --watch and --replay");
  if (o.classroom_port < 1 || o.classroom_port > 65535 - kClassroomRendezvousOffset)
    throw UsageError(fmt::format("--port {}: use 1 to {}", o.classroom_port,
                                 65535 - kClassroomRendezvousOffset));
  if (o.start_when < 0 || o.start_when > sim::kMaxNodes)
    throw UsageError(
        fmt::format("--start-when {}: use 1 to {} students", o.start_when, sim::kMaxNodes));
  if (o.token.empty()) o.token = classroom_token();
  if (o.token.size() > sim::kMaxTokenBytes)
    throw UsageError(fmt::format("--token: give 1 to {} bytes", sim::kMaxTokenBytes));
}

// --elastic: the laptops' training runs in a classroom go on without a laptop that leaves;
// the window's own runs do not take it.
void check_elastic(const sim::RunFlags& run, const GuiOptions& o) {
  if (run.elastic.empty() || run.elastic == "none") return;
  if (!o.classroom)
    throw UsageError(
        fmt::format("--elastic {}: the window's own runs are not elastic; with --classroom the "
                    "laptops' training runs are (or dsgd train --elastic)",
                    run.elastic));
  if (run.elastic == "restart")
    throw UsageError(
        "--elastic restart: the laptops write no checkpoints to restart from; use --elastic "
        "in-process");
}

void read_window_flags(const WindowFlags& w, GuiOptions& o) {
  if (w.mode == "train")
    o.sim.mode = RunMode::train;
  else if (w.mode == "allreduce" || w.mode == "all_reduce")
    o.sim.mode = RunMode::allreduce_demo;
  else
    throw UsageError(fmt::format("--mode {}: use train or allreduce", w.mode));
  if (auto v = parse_view(w.view))
    o.view = *v;
  else
    throw UsageError(fmt::format(
        "--view {}: use all, topology, convergence, timeline, gradients, controls, lesson, "
        "messages or time",
        w.view));
  const std::optional<View> tab = parse_view(w.tab);
  if (!tab || (*tab != View::timeline && *tab != View::messages && *tab != View::time))
    throw UsageError(fmt::format("--tab {}: use timeline, messages or time", w.tab));
  o.view_settings.bottom = *tab;
  o.view_settings.theme = parse_theme(w.theme);
  if (o.view_settings.theme == Theme::projector && o.view_settings.ui_scale == 1.0f)
    o.view_settings.ui_scale = kProjectorScale;
  if (o.view_settings.ui_scale < 0.5f || o.view_settings.ui_scale > 4.0f)
    throw UsageError("--scale: use 0.5 to 4");
  if (o.width < 200 || o.height < 200 || o.width > 8192 || o.height > 8192)
    throw UsageError("--width/--height: use 200 to 8192 pixels");
  if (o.headless && o.screenshot.empty() && o.record.path.empty())
    throw UsageError("--headless needs --screenshot FILE.png or --record FILE.gif");
  if (o.frames < 1) throw UsageError("--frames: at least 1");
  if (o.sim.speed < 0.001 || o.sim.speed > 1000) throw UsageError("--speed: use 0.001 to 1000");
  o.lesson_zh = lessons::parse_lang(w.lang) == lessons::Lang::zh || o.view_settings.chinese;
  o.view_settings.chinese = o.lesson_zh;
  o.view_settings.lesson_zh = o.lesson_zh;  // the lesson picker offers them in it too
  check_classroom_flags(o);
  if (o.lesson != 0) {
    if (!o.replay.empty()) throw UsageError("--lesson and --replay: choose one");
    if (!o.watch.empty()) throw UsageError("--lesson and --watch: choose one");
    lessons::find_lesson(o.lesson);  // UsageError naming the lessons there are
  }
}

}  // namespace

GuiOptions parse_gui_options(const std::vector<std::string>& args) {
  GuiOptions o;
  CLI::App app{"dsgd-gui: watch messages move, gradients average and the loss converge",
               "dsgd-gui"};
  WindowFlags window;
  sim::RunFlags run;
  // The run: the same flags, limits and messages as `dsgd train` (model, data, SGD, nodes,
  // network, faults), over the window's own defaults.
  sim::add_run_flags(app, run, sim::kTrainingFlags | sim::kClusterFlags | sim::kElasticFlags,
                     gui_run_defaults());
  add_window_flags(app, o, window);
  add_record_flags(app, o.record);
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    throw HelpRequested{app.help()};
  } catch (const CLI::ParseError& e) {
    throw UsageError(fmt::format("dsgd-gui: {}; see dsgd-gui --help", e.what()));
  }
  if (!window.algorithm.empty()) run.allreduce = window.algorithm;
  read_window_flags(window, o);
  read_record_flags(o);
  check_elastic(run, o);
  o.sim.run = sim::build_run_spec(run, gui_run_defaults());
  return o;
}

}  // namespace dsgd::gui
