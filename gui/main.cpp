// dsgd-gui: the window a teacher puts on the projector. Shaped like Dear ImGui's
// example_glfw_opengl3/main.cpp: set up GLFW, OpenGL 3 and ImGui; then each frame poll
// events, start a frame, draw the panels from a snapshot, apply the commands they pushed,
// render and swap. --headless renders a fixed number of frames (under Xvfb) and writes a PNG.
#include <GLFW/glfw3.h>
#include <malloc.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/errors.h"
#include "gui/app.h"
#include "gui/capture.h"
#include "gui/disc_layer.h"
#include "gui/font_texture.h"
#include "gui/line_layer.h"
#include "gui/lesson_session.h"
#include "gui/options.h"
#include "gui/theme.h"
#include "gui/views.h"

static void glfw_error_callback(int error, const char* description) {
  std::fprintf(stderr, "dsgd-gui: GLFW error %d: %s\n", error, description);
}

int main(int argc, char** argv) {
  using namespace dsgd::gui;
  GuiOptions options;
  try {
    options = parse_gui_options(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const HelpRequested& h) {
    std::fputs(h.text.c_str(), stdout);
    return 0;
  } catch (const dsgd::Error& e) {
    std::fprintf(stderr, "dsgd-gui: error: %s\n", e.what());
    return e.exit_code();
  }
  // A trace (and metrics file) to replay is read before any window opens: a bad file is one
  // line on stderr and exit code 2, as in dsgd. --headless instead renders the error window
  // into its screenshot (and exits 2 after it), which is how the error window is tested.
  std::optional<Replay> replay;
  std::optional<Curve> replay_curve;
  if (!options.replay.empty() && !options.headless) {
    try {
      replay = Replay::load(options.replay);
      if (!options.replay_metrics.empty())
        replay_curve = load_metrics_curve(options.replay_metrics);
    } catch (const dsgd::Error& e) {
      std::fprintf(stderr, "dsgd-gui: error: %s\n", e.what());
      return e.exit_code();
    }
  }

  // Mesa re-allocates its vertex and bin buffers every frame; keeping freed memory in the
  // heap instead of returning it to the kernel saves the page faults (a third of a frame
  // under Xvfb with the software renderer).
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);

  // Setup window
  glfwSetErrorCallback(glfw_error_callback);
  if (!glfwInit()) {
    std::fprintf(stderr,
                 "dsgd-gui: error: cannot open a display (no X server?); for screenshots run "
                 "`xvfb-run -a -s \"-screen 0 1600x900x24\" dsgd-gui --headless ...`\n");
    return 1;
  }
  const char* glsl_version = "#version 130";
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
  GLFWwindow* window =
      glfwCreateWindow(options.width, options.height, "dsgd - distributed SGD", nullptr, nullptr);
  if (window == nullptr) {
    std::fprintf(stderr, "dsgd-gui: error: cannot create an OpenGL 3 window\n");
    glfwTerminate();
    return 1;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(options.headless ? 0 : 1);  // vsync, except when rendering for a file

  // Setup Dear ImGui context, style, fonts
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // no imgui.ini: every start looks the same
  io.ConfigFlags |= ImGuiConfigFlags_NavEnableKeyboard;
  ViewSettings applied = options.view_settings;
  apply_theme(applied.theme, applied.ui_scale);
  ImVector<ImWchar> glyph_ranges;  // the font atlas points into it until shutdown
  load_fonts(options.font.empty() ? default_cjk_font() : options.font, applied.ui_scale,
             glyph_ranges, lesson_font_text());
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init(glsl_version);

  // What to show
  GuiApp app;
  app.view() = options.view_settings;
  app.view().draft = options.sim;  // a replay then shows the run it recorded instead
  if (!options.replay.empty()) {
    if (replay)
      app.open_replay(std::move(*replay), std::move(replay_curve));
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

  Commands commands;
  int frame = 0, stepped = 0;
  const auto started = std::chrono::steady_clock::now();
  auto last = started;
  int exit_code = 0;

  // Main loop
  while (!glfwWindowShouldClose(window)) {
    glfwPollEvents();
    const auto now = std::chrono::steady_clock::now();
    app.tick(std::chrono::duration<double>(now - last).count());
    last = now;
    if (app.view().theme != applied.theme || app.view().ui_scale != applied.ui_scale) {
      applied = app.view();
      apply_theme(applied.theme, applied.ui_scale);
      io.FontGlobalScale = applied.ui_scale / options.view_settings.ui_scale;
    }

    // Headless: drive the run to the state the screenshot should show.
    bool ready = true;
    if (options.headless && !app.replaying()) {
      if (stepped < options.step_messages) {
        if (commands.empty()) {
          commands.push(CommandKind::step_message);
          ++stepped;
        }
        ready = false;
      }
      SimSession* session = app.session();
      const double waited = std::chrono::duration<double>(now - started).count();
      // A lesson's steps are delivered over the next frames: wait for them.
      if (LessonSession* lesson = app.lesson();
          lesson && lesson->pending_steps() > 0 && lesson->running() && waited < options.timeout_s)
        ready = false;
      if (session && session->step() < options.min_steps && session->running() &&
          waited < options.timeout_s)
        ready = false;
    }

    // Start the Dear ImGui frame
    ImGui_ImplOpenGL3_NewFrame();
    choose_font_filter();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();

    const Snapshot snapshot = app.snapshot();
    draw_dashboard(snapshot, commands, options.view, options.headless);

    // Rendering
    ImGui::Render();
    int display_w, display_h;
    glfwGetFramebufferSize(window, &display_w, &display_h);
    glViewport(0, 0, display_w, display_h);
    // The views' own background colour: while they tile the window they draw none.
    const ImVec4 clear =
        ImGui::ColorConvertU32ToFloat4(palette_for(snapshot.view.theme).background);
    glClearColor(clear.x, clear.y, clear.z, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());

    app.apply(commands);  // after drawing: the next frame shows their effect
    ++frame;
    if (options.headless && ready && frame >= options.frames) {
      try {
        write_png(options.screenshot, capture_framebuffer(display_w, display_h));
        std::printf("dsgd-gui: wrote %s (%dx%d, %d frames)\n", options.screenshot.c_str(),
                    display_w, display_h, frame);
      } catch (const dsgd::Error& e) {
        std::fprintf(stderr, "dsgd-gui: error: %s\n", e.what());
        exit_code = e.exit_code();
      }
      if (!snapshot.error.empty()) {
        std::fprintf(stderr, "dsgd-gui: error shown in the window: %s\n", snapshot.error.c_str());
        if (exit_code == 0) exit_code = 2;
      }
      break;
    }
    glfwSwapBuffers(window);
    if (options.headless && !ready) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }

  // Cleanup
  if (SimSession* session = app.session()) session->stop();
  release_disc_layer();
  release_line_layer();
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return exit_code;
}
