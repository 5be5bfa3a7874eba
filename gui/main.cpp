// dsgd-gui: the window a teacher puts on the projector. Shaped like Dear ImGui's
// example_glfw_opengl3/main.cpp: set up GLFW, OpenGL 3 and ImGui; then each frame poll
// events, start a frame, draw the views from a snapshot, apply the commands they pushed,
// render and swap. --headless renders a fixed number of frames (under Xvfb) and writes a PNG;
// --record, and the Controls' export buttons, write GIFs and PNGs of what was rendered.
#include <GLFW/glfw3.h>
#include <malloc.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/errors.h"
#include "core/io/interrupt.h"
#include "gui/model/app.h"
#include "gui/model/compare_curves.h"
#include "gui/model/lesson_session.h"
#include "gui/model/options.h"
#include "gui/views/capture.h"
#include "gui/views/font_texture.h"
#include "gui/views/keyboard.h"
#include "gui/views/theme.h"
#include "gui/views/views.h"
#include "sim/fd_limit.h"

namespace {

using namespace dsgd::gui;
using SteadyClock = std::chrono::steady_clock;

void glfw_error_callback(int error, const char* description) {
  std::fprintf(stderr, "dsgd-gui: GLFW error %d: %s\n", error, description);
}

// A trace (and metrics file) to replay, and --compare's runs, read before any window opens: a bad
// file is one line on stderr and exit code 2, as in dsgd. --headless instead renders the error
// window into its screenshot (and exits 2 after it), which is how the error window is tested.
struct LoadedReplay {
  std::optional<Replay> replay;
  std::optional<Curve> curve;
  std::vector<Curve> compared;           // --compare, in every mode
  std::unique_ptr<Watch> watch;          // --watch, listening before the window opens
  std::unique_ptr<Classroom> classroom;  // --classroom, the same
};
LoadedReplay load_replay(const GuiOptions& options) {
  LoadedReplay loaded;
  if (!options.compare.empty()) loaded.compared = load_compare_curves(options.compare);
  if (!options.watch.empty()) loaded.watch = std::make_unique<Watch>(options.watch, options.token);
  if (options.classroom)
    loaded.classroom =
        std::make_unique<Classroom>(options.classroom_host, options.classroom_port, options.token);
  if (options.replay.empty() || options.headless) return loaded;
  loaded.replay = Replay::load(options.replay);
  if (!options.replay_metrics.empty()) loaded.curve = load_metrics_curve(options.replay_metrics);
  return loaded;
}

// The window with its OpenGL 3 context current, or null (the reason printed).
GLFWwindow* open_window(const GuiOptions& options) {
  // Mesa re-allocates its vertex and bin buffers every frame; keeping freed memory in the
  // heap instead of returning it to the kernel saves the page faults (a third of a frame
  // under Xvfb with the software renderer).
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  glfwSetErrorCallback(glfw_error_callback);
  if (!glfwInit()) {
    std::fprintf(stderr,
                 "dsgd-gui: error: cannot open a display (no X server?); for screenshots run "
                 "`xvfb-run -a -s \"-screen 0 1600x900x24\" dsgd-gui --headless ...`\n");
    return nullptr;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
  GLFWwindow* window =
      glfwCreateWindow(options.width, options.height, "dsgd - distributed SGD", nullptr, nullptr);
  if (window == nullptr) {
    std::fprintf(stderr, "dsgd-gui: error: cannot create an OpenGL 3 window\n");
    glfwTerminate();
    return nullptr;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(options.headless ? 0 : 1);  // vsync, except when rendering for a file
  return window;
}

// The font atlas, rasterised at the UI scale: crisp at any scale, and drawn at a font scale
// of 1, which a software renderer samples for less (font_texture.h). Rebuilt when the scale
// changes, once the mouse is up (not on every frame of a drag on the scale slider: one
// build of the CJK atlas takes a noticeable moment); meanwhile ImGui scales the old one.
struct Fonts {
  std::string path, extra_text;  // the CJK font file and the lessons' own characters
  ImVector<ImWchar> ranges;      // the atlas points into it until it is rebuilt
  float scale = 0;               // what the atlas was rasterised for

  void rasterise(float ui_scale) {
    load_fonts(path, ui_scale, ranges, extra_text);
    scale = ui_scale;
    ImGui::GetIO().FontGlobalScale = 1;
  }
  // Before a frame: follow `ui_scale`, rebuilding the atlas's texture when it is not the
  // first frame (before it, the backend builds it).
  void follow(float ui_scale, bool first) {
    if (ui_scale == scale) return;
    if (!first && ImGui::GetIO().MouseDown[0]) {
      ImGui::GetIO().FontGlobalScale = ui_scale / scale;
      return;
    }
    rasterise(ui_scale);
    if (first) return;
    ImGui_ImplOpenGL3_DestroyFontsTexture();
    ImGui_ImplOpenGL3_CreateFontsTexture();
  }
};

// The ImGui context, style and fonts.
void setup_imgui(GLFWwindow* window, const GuiOptions& options, Fonts& fonts) {
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // no imgui.ini: every start looks the same
  io.ConfigFlags |= ImGuiConfigFlags_NavEnableKeyboard;
  apply_theme(options.view_settings.theme, options.view_settings.ui_scale);
  fonts.path = options.font.empty() ? default_cjk_font() : options.font;
  fonts.extra_text = lesson_font_text();
  fonts.follow(options.view_settings.ui_scale, true);
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 130");
}

// What the window shows first: a replay, a lesson, or a live run of the options' settings.
void start_showing(GuiApp& app, const GuiOptions& options, LoadedReplay loaded) {
  app.view() = options.view_settings;
  app.view().draft = options.sim;  // a replay then shows the run it recorded instead
  app.set_compared(std::move(loaded.compared));
  if (loaded.watch) {
    app.open_watch(std::move(loaded.watch));
  } else if (loaded.classroom) {
    if (options.lesson > 0) app.view().lesson_pick = options.lesson;  // the panel offers it
    app.open_classroom(std::move(loaded.classroom));
  } else if (!options.replay.empty()) {
    if (loaded.replay)
      app.open_replay(std::move(*loaded.replay), std::move(loaded.curve));
    else  // --headless: a bad file shows the error window
      app.open_replay(options.replay, options.replay_metrics);
    if (options.seek >= 0) {
      app.seek_fraction(options.seek);
      Commands pause;
      pause.push(CommandKind::pause);
      app.apply(pause);
    }
  } else if (options.lesson > 0) {
    app.start_lesson(options.lesson, options.lesson_zh, options.sim.speed);
  } else {
    app.start_live(options.sim);
  }
}

// Headless: whether the run has reached the state the screenshot should show (messages
// stepped, lesson steps delivered, training steps done), pushing the next step if not.
struct HeadlessDriver {
  const GuiOptions& options;
  SteadyClock::time_point started = SteadyClock::now();
  int stepped = 0;
  int class_steps = 0;  // a classroom lesson's

  // A classroom: once --start-when students have joined, starts a training run on them (an
  // elastic one takes those who join later), or --lesson N, which it steps a message at a
  // time; whether that run is over, or the lesson has had its --step-messages (the
  // screenshot shows it held there).
  bool class_run_over(GuiApp& app, const ClassroomState& c, Commands& commands) {
    if (c.run == 0 && options.start_when > 0 && c.waiting() >= options.start_when &&
        commands.empty())
      commands.push(Command{.kind = CommandKind::start_class_run,
                            .flag = options.lesson_zh,
                            .index = options.lesson});
    if (c.elastic && c.running() && c.waiting() > 0 && commands.empty())
      commands.push(CommandKind::add_to_class_run);  // late students join the run
    ClassLesson* lesson = app.class_lesson();
    if (lesson && !lesson->finished() && lesson->pending_steps() == 0) {
      if (options.step_messages > 0 && class_steps == options.step_messages) return true;
      if (commands.empty()) {
        commands.push(CommandKind::step_message);
        ++class_steps;
      }
    }
    return c.run > 0 && !c.running();
  }

  bool ready(GuiApp& app, Commands& commands) {
    if (!options.headless || app.replaying()) return true;
    bool ready = true;
    if (stepped < options.step_messages && !options.classroom) {
      if (commands.empty()) {
        commands.push(CommandKind::step_message);
        ++stepped;
      }
      ready = false;
    }
    const bool waiting =
        std::chrono::duration<double>(SteadyClock::now() - started).count() < options.timeout_s;
    // A lesson's steps are delivered over the next frames: wait for them.
    if (LessonSession* lesson = app.lesson();
        lesson && lesson->pending_steps() > 0 && lesson->running() && waiting)
      ready = false;
    if (SimSession* session = app.session();
        session && session->step() < options.min_steps && session->running() && waiting)
      ready = false;
    if (const Classroom* classroom = app.classroom(); classroom && waiting)
      ready = ready && class_run_over(app, classroom->state(), commands);
    const ClassLesson* held = app.class_lesson();
    if (held && held->finished()) held = nullptr;
    // Watching: until a run has come, every rank of it has been heard from, and every
    // sender that came has gone (a class's lesson held after --step-messages stays).
    if (const Watch* watch = app.watch(); watch && waiting && !held) {
      const WatchState w = watch->state();
      const auto heard = std::count_if(w.rank_names.begin(), w.rank_names.end(),
                                       [](const std::string& n) { return !n.empty(); });
      if (w.senders.empty() || w.connected > 0 || heard < w.world) ready = false;
    }
    return ready;
  }
};

// Renders the frame ImGui built, over the views' background colour (while they tile the
// window they draw none of their own).
void render(GLFWwindow* window, const Snapshot& snapshot, int& width, int& height) {
  ImGui::Render();
  glfwGetFramebufferSize(window, &width, &height);
  glViewport(0, 0, width, height);
  const ImVec4 clear = ImGui::ColorConvertU32ToFloat4(palette_for(snapshot.view.theme).background);
  glClearColor(clear.x, clear.y, clear.z, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

// Headless --watch: what came, for scripts ("dsgd-gui: watched alice, bob: 1200 events, ...").
void print_watched(const WatchState& w) {
  std::printf("dsgd-gui: watched %s: %zu events, %llu dropped, %d refused\n",
              w.senders.empty() ? "no run" : fmt::format("{}", fmt::join(w.senders, ", ")).c_str(),
              w.events.size(), static_cast<unsigned long long>(w.dropped), w.refused);
}

// Headless --classroom: who joined and how their run went, a line each.
void print_classroom(const ClassroomState& c) {
  for (const Student& st : c.students) {
    std::string state = !st.here      ? "left"
                        : st.run == 0 ? "waiting"
                        : st.rank < 0 ? fmt::format("joined run {}", st.run)
                                      : fmt::format("rank {} of run {}", st.rank, st.run);
    if (st.here && st.run > 0) state += st.running ? ", running" : ": " + st.outcome;
    std::printf("dsgd-gui: student %d %s (%s): %s\n", st.seat, st.name.c_str(), st.address.c_str(),
                state.c_str());
  }
  if (c.refused > 0)
    std::printf("dsgd-gui: %d refused (latest: %s)\n", c.refused, c.last_refusal.c_str());
}

// Writes the headless screenshot; the exit code (2 when the window showed an error other than
// the end a run's simulated faults gave it, which is what such a screenshot is for).
int write_screenshot(const GuiOptions& options, const Snapshot& snapshot, int width, int height,
                     int frames) {
  int exit_code = 0;
  try {
    if (!options.screenshot.empty()) {  // else --record alone
      write_png(options.screenshot, capture_framebuffer(width, height));
      std::printf("dsgd-gui: wrote %s (%dx%d, %d frames)\n", options.screenshot.c_str(), width,
                  height, frames);
    }
  } catch (const dsgd::Error& e) {
    std::fprintf(stderr, "dsgd-gui: error: %s\n", e.what());
    exit_code = e.exit_code();
  }
  if (snapshot.error_is_fault) {
    std::printf("dsgd-gui: the run ended by its simulated faults: %s\n", snapshot.error.c_str());
  } else if (!snapshot.error.empty()) {
    std::fprintf(stderr, "dsgd-gui: error shown in the window: %s\n", snapshot.error.c_str());
    if (exit_code == 0) exit_code = 2;
  }
  return exit_code;
}

// Where the window was before F made it fill the screen.
struct WindowedPlace {
  int x = 0, y = 0, width = 0, height = 0;
};

// F: the window fills the primary monitor, or goes back to where it was.
void toggle_full_screen(GLFWwindow* window, WindowedPlace& place) {
  if (glfwGetWindowMonitor(window)) {
    glfwSetWindowMonitor(window, nullptr, place.x, place.y, place.width, place.height, 0);
    return;
  }
  GLFWmonitor* monitor = glfwGetPrimaryMonitor();
  const GLFWvidmode* mode = monitor ? glfwGetVideoMode(monitor) : nullptr;
  if (!mode) return;
  glfwGetWindowPos(window, &place.x, &place.y);
  glfwGetWindowSize(window, &place.width, &place.height);
  glfwSetWindowMonitor(window, monitor, 0, 0, mode->width, mode->height, mode->refreshRate);
}

// What the window exports: --record's GIF from the first frame on, and what the Controls'
// buttons ask for. Its lines go to stdout, its errors to stderr. DataError when --record's
// path cannot be written.
Exporter make_exporter(const GuiOptions& options) {
  std::optional<RecordOptions> record;
  if (!options.record.path.empty()) record = options.record;
  RecordOptions button = options.record;  // the same shrinking and pace, no frame count
  button.max_frames = 0;
  return Exporter(std::move(record), std::move(button), ".",
                  [](const std::string& line, bool error) {
                    std::fprintf(error ? stderr : stdout, "dsgd-gui: %s%s\n",
                                 error ? "error: " : "", line.c_str());
                    std::fflush(error ? stderr : stdout);
                  });
}

// The main loop: until the window closes (or, headless, the screenshot is written).
int run(GLFWwindow* window, const GuiOptions& options, GuiApp& app, Exporter& exporter,
        Fonts& fonts) {
  ViewState views;  // its GL images go before the context does
  ViewSettings applied = options.view_settings;
  Commands commands;
  HeadlessDriver headless{.options = options};
  WindowedPlace windowed;
  const auto start = SteadyClock::now();
  auto last = start;
  for (int frame = 1; !glfwWindowShouldClose(window); ++frame) {
    glfwPollEvents();
    const auto now = SteadyClock::now();
    app.tick(std::chrono::duration<double>(now - last).count());
    last = now;
    if (app.view().theme != applied.theme || app.view().ui_scale != applied.ui_scale) {
      applied = app.view();
      apply_theme(applied.theme, applied.ui_scale);
    }
    fonts.follow(applied.ui_scale, false);
    const bool ready = headless.ready(app, commands);
    ImGui_ImplOpenGL3_NewFrame();
    choose_font_filter();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    Snapshot snapshot = app.snapshot();
    snapshot.exporting = exporter.status(views.windows);
    if (!options.headless && shortcut_commands(read_key_presses(), snapshot, commands))
      toggle_full_screen(window, windowed);
    draw_dashboard(snapshot, commands, options.view, options.headless, views);
    int width = 0, height = 0;
    render(window, snapshot, width, height);
    exporter.after_render(commands.pending(), views.windows,
                          std::chrono::duration<double>(now - start).count(),
                          [&] { return capture_framebuffer(width, height); });
    app.apply(commands);  // after drawing: the next frame shows their effect
    if (options.headless && ready && frame >= options.frames && !exporter.recording()) {
      for (const std::string& problem : views.tiling.problems)
        std::printf("dsgd-gui: layout: %s\n", problem.c_str());
      if (const Classroom* classroom = app.classroom()) print_classroom(classroom->state());
      if (ClassLesson* lesson = app.class_lesson(); lesson && lesson->finished())
        std::fputs(lesson->take_transcript().c_str(), stdout);
      if (const Watch* watch = app.watch()) print_watched(watch->state());
      return write_screenshot(options, snapshot, width, height, frame);
    }
    glfwSwapBuffers(window);
    if (options.headless && !ready) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  dsgd::handle_interrupts("dsgd-gui");  // Ctrl+C removes an unfinished GIF's temporary file
  dsgd::sim::raise_open_file_limit();   // simulated nodes need descriptors: every one allowed
  GuiOptions options;
  LoadedReplay loaded;
  std::optional<Exporter> exporter;
  try {
    options = parse_gui_options(std::vector<std::string>(argv + 1, argv + argc));
    loaded = load_replay(options);
    exporter.emplace(make_exporter(options));
  } catch (const HelpRequested& h) {
    std::fputs(h.text.c_str(), stdout);
    return 0;
  } catch (const dsgd::Error& e) {
    std::fprintf(stderr, "dsgd-gui: error: %s\n", e.what());
    return e.exit_code();
  }
  GLFWwindow* window = open_window(options);
  if (!window) return 1;
  Fonts fonts;  // the font atlas points into it until shutdown
  setup_imgui(window, options, fonts);
  int exit_code = 0;
  {
    GuiApp app;
    start_showing(app, options, std::move(loaded));
    exit_code = run(window, options, app, *exporter, fonts);
    if (SimSession* session = app.session()) session->stop();
    exporter->finish();  // a recording the window's closing cut short
    if (exit_code == 0 && exporter->failed()) exit_code = dsgd::kExitUsage;
  }
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return exit_code;
}
