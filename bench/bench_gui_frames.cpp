// Frame time of dsgd-gui's dashboard: 32 ranks and 1000 packets in flight (a synthetic
// event stream), every view drawn each frame, rendered with OpenGL 3 — under Xvfb with
// Mesa's software renderer when run as
//   xvfb-run -a -s "-screen 0 1280x720x24" build/.../bench_gui_frames [frames] [view] [WxH]
// (a fixed 1280x720 window by default, no vsync). Prints the median and 99th percentile of
// the frame time (snapshot build + ImGui frame + render + glFinish), the CPU time per frame
// (all threads, and the main thread alone: on a shared machine wall time mostly measures
// waiting for a core), and a breakdown: snapshot build, ImGui, GL, and each view's ImGui
// time and vertex count. The goal is < 16 ms per frame.
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <GL/gl.h>

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <ctime>
#include <vector>

#include "gui/model/commands.h"
#include "gui/views/disc_layer.h"
#include "gui/views/font_texture.h"
#include "gui/views/line_layer.h"
#include "gui/model/snapshot.h"
#include "gui/model/tiling.h"
#include "gui/views/theme.h"
#include "gui/views/views.h"

using namespace dsgd;
using namespace dsgd::gui;

namespace {

constexpr int kRanks = 32, kPackets = 1000;

// kPackets messages, each in flight over [send, send + 10 ms], spread so that all of them
// are in flight at t in [10 ms, 11 ms]; plus a compute phase and an all_reduce per rank.
std::vector<Event> synthetic_events() {
  std::vector<Event> events;
  for (int r = 0; r < kRanks; ++r) {
    events.push_back(
        {.kind = EventKind::compute_begin, .rank = r, .model_s = 0, .op = "forward_backward"});
    events.push_back(
        {.kind = EventKind::compute_end, .rank = r, .model_s = 0.001, .op = "forward_backward"});
    events.push_back(
        {.kind = EventKind::collective_begin, .rank = r, .model_s = 0.001, .op = "all_reduce"});
  }
  for (int i = 0; i < kPackets; ++i) {
    const int src = i % kRanks, dst = (src + 1 + i / kRanks) % kRanks;
    const double send = 0.001 + 0.009 * i / kPackets;
    events.push_back({.kind = EventKind::send_begin,
                      .rank = src,
                      .peer = dst,
                      .tag = collective_tag::kAllReduceRing,
                      .bytes = 1024u << (i % 10),
                      .model_s = send,
                      .preview_count = 2,
                      .preview = {0.5f, -1.25f}});
  }
  for (int i = 0; i < kPackets; ++i) {
    const int src = i % kRanks, dst = (src + 1 + i / kRanks) % kRanks;
    const double send = 0.001 + 0.009 * i / kPackets;
    events.push_back({.kind = EventKind::recv_end,
                      .rank = dst,
                      .peer = src,
                      .tag = collective_tag::kAllReduceRing,
                      .model_s = send + 0.0102});
  }
  return events;
}

// CPU seconds used by the whole process (every llvmpipe thread included): what a frame costs
// when the machine is shared and wall time mostly measures waiting for a core.
double cpu_s(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}
double process_cpu_s() {
  return cpu_s(CLOCK_PROCESS_CPUTIME_ID);
}
double thread_cpu_s() {
  return cpu_s(CLOCK_THREAD_CPUTIME_ID);
}

// Each view drawn alone into its dashboard window, timed (thread CPU) with its vertex count.
struct ViewCost {
  View view;
  std::vector<double> cpu_ms;
  int vertices = 0;
};

void draw_views_timed(const Snapshot& s, Commands& commands, std::vector<ViewCost>& costs,
                      ViewState& state) {
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  ImGui::PushStyleColor(ImGuiCol_WindowBg,
                        ImGui::ColorConvertU32ToFloat4(palette_for(s.view.theme).background));
  for (ViewCost& c : costs) {
    const Rect r = view_rect(c.view, View::all, display.x, display.y);
    ImGui::SetNextWindowPos({r.x0, r.y0}, ImGuiCond_Always);
    ImGui::SetNextWindowSize({r.x1 - r.x0, r.y1 - r.y0}, ImGuiCond_Always);
    ImGui::Begin(view_title(c.view, false), nullptr, ImGuiWindowFlags_NoCollapse);
    const double t0 = thread_cpu_s();
    draw_view(c.view, s, commands, state);
    c.cpu_ms.push_back((thread_cpu_s() - t0) * 1e3);
    c.vertices = ImGui::GetWindowDrawList()->VtxBuffer.Size;
    ImGui::End();
  }
  ImGui::PopStyleColor();
}

std::string load_average() {
  std::FILE* f = std::fopen("/proc/loadavg", "r");
  char text[64] = "?";
  if (f) {
    if (!std::fgets(text, sizeof text, f)) text[0] = 0;
    std::fclose(f);
  }
  std::string s(text);
  return s.substr(0, s.find(' '));
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5))];
}

}  // namespace

int main(int argc, char** argv) {
  const int frames = argc > 1 ? std::max(10, std::atoi(argv[1])) : 300;
  // Optional: one view only ("topology", ...), to see where the time goes.
  const View only = argc > 2 ? parse_view(argv[2]).value_or(View::all) : View::all;
  int width = 1280, height = 720;  // optional third argument: WIDTHxHEIGHT
  if (argc > 3 && std::sscanf(argv[3], "%dx%d", &width, &height) != 2) {
    std::fprintf(stderr, "usage: bench_gui_frames [frames] [view] [WIDTHxHEIGHT]\n");
    return 2;
  }
  // As dsgd-gui does: keep Mesa's per-frame buffers in the heap instead of fresh mmaps.
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  if (!glfwInit()) {
    std::fprintf(stderr, "bench_gui_frames: no display; run under xvfb-run\n");
    return 1;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
  GLFWwindow* window = glfwCreateWindow(width, height, "bench_gui_frames", nullptr, nullptr);
  if (!window) {
    std::fprintf(stderr, "bench_gui_frames: cannot create an OpenGL 3 window\n");
    return 1;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(0);
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;
  apply_theme(Theme::dark, 1.0f);
  ImVector<ImWchar> glyph_ranges;
  load_fonts(default_cjk_font(), 1.0f, glyph_ranges);
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 130");
  auto state = std::make_unique<ViewState>();  // its GL images go before the context

  const std::vector<Event> events = synthetic_events();
  SnapshotInputs inputs{.world = kRanks, .time_base = TimeBase::model};
  std::vector<double> frame_ms, cpu_ms, main_cpu_ms, build_ms, imgui_ms, gl_ms;
  int vertices = 0;
  size_t in_flight = 0;
  Commands commands;
  for (int f = 0; f < frames + 10; ++f) {
    const auto t0 = std::chrono::steady_clock::now();
    const double cpu0 = process_cpu_s(), main0 = thread_cpu_s();
    glfwPollEvents();
    inputs.now_s = 0.0100 + 0.001 * (f % 100) / 100.0;  // every packet in flight, moving
    Snapshot s = build_snapshot(events, inputs);
    s.controls.live = true;
    const auto t1 = std::chrono::steady_clock::now();
    ImGui_ImplOpenGL3_NewFrame();
    choose_font_filter();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    draw_dashboard(s, commands, only, true, *state);
    ImGui::Render();
    const auto t_imgui = std::chrono::steady_clock::now();
    int w, h;
    glfwGetFramebufferSize(window, &w, &h);
    glViewport(0, 0, w, h);
    const ImVec4 clear = ImGui::ColorConvertU32ToFloat4(palette_for(Theme::dark).background);
    glClearColor(clear.x, clear.y, clear.z, 1);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    glfwSwapBuffers(window);
    glFinish();
    commands.drain();
    const auto t2 = std::chrono::steady_clock::now();
    if (f >= 10) {  // warm-up: font atlas upload, first allocations
      frame_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t0).count());
      cpu_ms.push_back((process_cpu_s() - cpu0) * 1e3);
      main_cpu_ms.push_back((thread_cpu_s() - main0) * 1e3);
      gl_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t_imgui).count());
      build_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      imgui_ms.push_back(std::chrono::duration<double, std::milli>(t_imgui - t1).count());
      vertices = ImGui::GetDrawData()->TotalVtxCount;
      in_flight = s.in_flight.size();
    }
  }
  // The breakdown: each view's own ImGui time (no GL), over a few frames.
  std::vector<ViewCost> costs;
  for (View v : {View::controls, View::topology, View::convergence, View::gradients, View::timeline,
                 View::messages, View::time})
    costs.push_back({.view = v});
  for (int f = 0; f < std::min(frames, 100); ++f) {
    inputs.now_s = 0.0100 + 0.001 * (f % 100) / 100.0;
    Snapshot s = build_snapshot(events, inputs);
    s.controls.live = true;
    ImGui_ImplOpenGL3_NewFrame();
    choose_font_filter();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    draw_views_timed(s, commands, costs, *state);
    ImGui::Render();
    commands.drain();
  }

  std::printf("bench_gui_frames: %d ranks, %zu packets in flight, %d frames at %dx%d, %s\n", kRanks,
              in_flight, frames, width, height,
              reinterpret_cast<const char*>(glGetString(GL_RENDERER)));
  std::printf("  frame time     median %.2f ms   p99 %.2f ms   (goal < 16 ms)\n",
              percentile(frame_ms, 0.5), percentile(frame_ms, 0.99));
  std::printf("  CPU per frame  median %.2f ms   p99 %.2f ms   (all threads; load %s)\n",
              percentile(cpu_ms, 0.5), percentile(cpu_ms, 0.99), load_average().c_str());
  std::printf("  main thread    median %.2f ms   p99 %.2f ms   (CPU)\n",
              percentile(main_cpu_ms, 0.5), percentile(main_cpu_ms, 0.99));
  std::printf("  snapshot build median %.2f ms   p99 %.2f ms\n", percentile(build_ms, 0.5),
              percentile(build_ms, 0.99));
  std::printf("  ImGui frame    median %.2f ms   p99 %.2f ms   (%d vertices)\n",
              percentile(imgui_ms, 0.5), percentile(imgui_ms, 0.99), vertices);
  std::printf("  GL (render, swap, finish) median %.2f ms   p99 %.2f ms\n", percentile(gl_ms, 0.5),
              percentile(gl_ms, 0.99));
  for (const ViewCost& c : costs)
    std::printf("    %-12s ImGui CPU median %.3f ms   %6d vertices\n", to_string(c.view),
                percentile(c.cpu_ms, 0.5), c.vertices);
  state.reset();
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return 0;
}
