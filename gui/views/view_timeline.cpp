// The timeline view: a Gantt chart per rank (compute lane above, communication lane below)
// with messages as lines from send to arrival (only their ends when very many are in view),
// a time cursor, zoom (buttons or the mouse wheel) and scrubbing (drag in a replay).
// Clicking a message selects it in every view.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <imgui.h>

#include "gui/model/lane_label.h"
#include "gui/model/contrast.h"
#include "gui/model/time_window.h"
#include "gui/views/axis.h"
#include "gui/views/theme.h"
#include "gui/views/views.h"

namespace dsgd::gui {
namespace {

// More visible messages than this and the timeline draws their ends, not lines (see below).
constexpr size_t kMaxMessageLines = 400;

// The visible time window [t0, t1] (time_window.h).
std::pair<double, double> visible_window(const Snapshot& s) {
  const TimeWindow w = time_window({.begin_s = s.begin_s,
                                    .end_s = s.end_s,
                                    .now_s = s.now_s,
                                    .live = s.controls.live,
                                    .span_s = s.view.timeline_span_s,
                                    .end_at_s = s.view.timeline_end_s});
  return {w.t0, w.t1};
}

float distance_to_segment(ImVec2 p, ImVec2 a, ImVec2 b) {
  const float dx = b.x - a.x, dy = b.y - a.y;
  const float len2 = dx * dx + dy * dy;
  float t = len2 > 0 ? ((p.x - a.x) * dx + (p.y - a.y) * dy) / len2 : 0;
  t = std::clamp(t, 0.0f, 1.0f);
  const float ex = a.x + t * dx - p.x, ey = a.y + t * dy - p.y;
  return std::sqrt(ex * ex + ey * ey);
}

}  // namespace

namespace {

// Zooms the window [t0, t1] by `factor` around its middle: following stays following,
// a window the user scrolled stays centred where it was.
void zoom_by(double t0, double t1, double factor, ViewSettings& v) {
  v.timeline_span_s = (t1 - t0) * factor;
  if (v.timeline_end_s > 0) v.timeline_end_s = (t0 + t1) / 2 + v.timeline_span_s / 2;
}

// The zoom buttons and the visible span; edits `v`, returns whether it changed.
bool zoom_buttons(const Snapshot& s, double t0, double t1, ViewSettings& v) {
  bool changed = false;
  if (ImGui::Button("+")) {
    zoom_by(t0, t1, 0.5, v);
    changed = true;
  }
  ImGui::SameLine();
  if (ImGui::Button("-")) {
    zoom_by(t0, t1, 2, v);
    changed = true;
  }
  ImGui::SameLine();
  if (ImGui::Button(tr("all"))) {
    v.timeline_span_s = 0;
    v.timeline_end_s = 0;
    changed = true;
  }
  if (v.timeline_end_s > 0) {
    ImGui::SameLine();
    if (ImGui::Button(tr(s.controls.live ? "follow now" : "follow the cursor"))) {
      v.timeline_end_s = 0;
      changed = true;
    }
  }
  ImGui::SameLine();
  ImGui::Text("%s .. %s  (%s)", format_seconds(t0).c_str(), format_seconds(t1).c_str(),
              tr(s.time_base == TimeBase::model ? "model time" : "network time"));
  return changed;
}

// Where this frame draws: one row per rank (compute lane above, communication below) from
// x0 to x1 over [t0, t1], the time axis underneath.
struct Grid {
  const Snapshot& s;
  Palette pal;
  float scale;
  ImDrawList* dl;
  ImVec2 top, avail;
  double t0, t1, span;
  float x0, x1, axis_h, row_h, lane_h;

  float x(double t) const { return x0 + static_cast<float>((t - t0) / span) * (x1 - x0); }
  float lane_y(int rank, Lane lane) const {
    return top.y + rank * row_h + (lane == Lane::compute ? 0.08f : 0.52f) * row_h;
  }
};

Grid grid_of(const Snapshot& s, ImVec2 top, ImVec2 avail, double t0, double t1) {
  Grid g{.s = s,
         .pal = palette_for(s.view.theme),
         .scale = s.view.ui_scale,
         .dl = ImGui::GetWindowDrawList(),
         .top = top,
         .avail = avail,
         .t0 = t0,
         .t1 = t1,
         .span = std::max(1e-12, t1 - t0)};
  // Room for the widest lane label ("rank 63", "ranks 992-1023" in a summary) left of the lanes.
  const float label_w = ImGui::CalcTextSize(lane_label(s.summary, s.world - 1).c_str()).x + 8;
  g.x0 = top.x + std::max(58 * g.scale, label_w);
  g.x1 = top.x + avail.x - 6;
  g.axis_h = ImGui::GetTextLineHeightWithSpacing() + 2;
  g.row_h = (avail.y - g.axis_h) / s.world;
  g.lane_h = g.row_h * 0.40f;
  return g;
}

// A live run keeps its newest events: before the oldest one kept, the lanes are shaded
// and say so, rather than look idle.
void draw_dropped(const Grid& g) {
  if (g.s.events_from_s < 0 || g.s.events_from_s <= g.t0) return;
  const float b = g.x(std::min(g.s.events_from_s, g.t1));
  const float bottom = g.top.y + g.avail.y - g.axis_h;
  g.dl->AddRectFilled({g.x0, g.top.y}, {b, bottom}, g.pal.grid);
  const char* note = tr("older events not kept");
  if (b - g.x0 > ImGui::CalcTextSize(note).x + 8)
    g.dl->AddText({g.x0 + 4, g.top.y + 2}, g.pal.dim_text, note);
}

void draw_rows(const Grid& g) {
  for (int r = 0; r < g.s.world; ++r) {
    const float y = g.top.y + r * g.row_h;
    g.dl->AddLine({g.top.x, y}, {g.x1, y}, g.pal.grid);
    if (g.row_h >= 0.75f * ImGui::GetTextLineHeight())  // no label over its neighbour
      g.dl->AddText({g.top.x + 4, y + (g.row_h - ImGui::GetTextLineHeight()) / 2}, g.pal.text,
                    lane_label(g.s.summary, r).c_str());
  }
}

void draw_slices(const Grid& g) {
  for (const SliceView& sl : g.s.slices) {
    if (sl.end_s < g.t0 || sl.begin_s > g.t1) continue;
    const float y = g.lane_y(sl.rank, sl.lane);
    const float a = g.x(sl.begin_s), b = std::max(g.x(sl.end_s), a + 1.0f);
    g.dl->AddRectFilled({a, y}, {b, y + g.lane_h}, colour_for_op(sl.label));
    // Its label where it fits, else the collective's name ("all_reduce"), else nothing.
    const float font = ImGui::GetFontSize(), room = b - a - 5;
    if (room < 3 * font || g.lane_h < 0.8f * font) continue;  // no name is that short
    const char* text = ImGui::CalcTextSize(sl.label).x <= room  ? sl.label
                       : ImGui::CalcTextSize(sl.name).x <= room ? sl.name
                                                                : nullptr;
    if (text)
      g.dl->AddText({a + 3, y + (g.lane_h - font) / 2}, text_colour_on(colour_for_op(sl.label)),
                    text);
  }
}

// The messages in view, send (comm lane of src) to arrival (comm lane of dst), and the one
// nearest the mouse (-1: none close enough).
struct VisibleMessages {
  struct Line {
    int index;
    ImVec2 a, b;
  };
  std::vector<Line> lines;
  int nearest = -1;
};

// Where a message's line ends: its arrival, or now while it is in flight.
double line_end_s(const Snapshot& s, const MessageView& m) {
  return m.arrived ? m.arrive_s : std::min(m.arrive_s, s.now_s);
}

bool in_view(const Snapshot& s, const MessageView& m, double t0, double t1) {
  return line_end_s(s, m) >= t0 && m.send_s <= t1;
}

// The messages in view when they are too many for lines, else 0.
size_t dense_messages(const Snapshot& s, double t0, double t1) {
  const auto n = static_cast<size_t>(
      std::count_if(s.messages.begin(), s.messages.end(),
                    [&](const MessageView& m) { return in_view(s, m, t0, t1); }));
  return n > kMaxMessageLines ? n : 0;
}

VisibleMessages visible_messages(const Grid& g, ImVec2 mouse) {
  const Snapshot& s = g.s;
  VisibleMessages out;
  float nearest_d = 6 * g.scale;
  for (int i = 0; i < static_cast<int>(s.messages.size()); ++i) {
    const MessageView& m = s.messages[i];
    if (!in_view(s, m, g.t0, g.t1)) continue;
    const double arrive = line_end_s(s, m);
    const ImVec2 a{g.x(m.send_s), g.lane_y(m.src, Lane::comm) + g.lane_h / 2};
    const ImVec2 b{g.x(arrive), g.lane_y(m.dst, Lane::comm) + g.lane_h / 2};
    out.lines.push_back({i, a, b});
    const float d = distance_to_segment(mouse, a, b);
    if (d < nearest_d) {
      nearest_d = d;
      out.nearest = i;
    }
  }
  return out;
}

// Without anti-aliasing: an anti-aliased line is a textured quad, and a thousand long
// diagonal ones cost a software renderer (Mesa llvmpipe under Xvfb) most of a frame;
// one-pixel lines look the same at this size. Dense: past kMaxMessageLines lines the lanes
// vanish under a web of them, so each message shows as a tick where it leaves and one where
// it arrives; the hovered and the selected message keep their line (the legend says so).
void draw_messages(const Grid& g, const VisibleMessages& visible) {
  const ImDrawListFlags flags = g.dl->Flags;
  g.dl->Flags &= ~(ImDrawListFlags_AntiAliasedLines | ImDrawListFlags_AntiAliasedLinesUseTex);
  const bool dense = visible.lines.size() > kMaxMessageLines;
  for (const VisibleMessages::Line& m : visible.lines) {
    const bool selected = m.index == g.s.view.selected_message;
    const Rgba colour = selected ? g.pal.selection : colour_for_op(g.s.messages[m.index].op);
    if (!dense || selected || m.index == visible.nearest) {
      g.dl->AddLine(m.a, m.b, colour, (selected ? 3.0f : 1.0f) * g.scale);
    } else {  // grey, at the lane's foot: a dark tick across it reads as a gap in the slice
      const float h = g.lane_h / 2, tick = 0.4f * g.lane_h;
      g.dl->AddLine({m.a.x, m.a.y + h - tick}, {m.a.x, m.a.y + h}, g.pal.link, g.scale);
      g.dl->AddLine({m.b.x, m.b.y + h - tick}, {m.b.x, m.b.y + h}, g.pal.link, g.scale);
    }
  }
  g.dl->Flags = flags;
}

// Nice ticks of the visible time (ticks.h), their labels as many digits apart as the
// zoom needs, centred under their tick and kept inside the view.
void draw_time_axis(const Grid& g, float bottom) {
  const Axis axis = fit_axis(g.t0, g.t1, g.x1 - g.x0, true, false, TickFormat::seconds, false);
  for (const Tick& t : axis.ticks) {
    const float x = g.x(t.value), w = ImGui::CalcTextSize(t.label.c_str()).x;
    g.dl->AddLine({x, bottom - 0.3f * ImGui::GetFontSize()}, {x, bottom}, g.pal.text);
    g.dl->AddText({std::clamp(x - w / 2, g.top.x, g.x1 - w), bottom + 2}, g.pal.text,
                  t.label.c_str());
  }
}

void draw_cursor_and_axis(const Grid& g) {
  const float bottom = g.top.y + g.avail.y - g.axis_h;
  if (g.s.now_s >= g.t0 && g.s.now_s <= g.t1)
    g.dl->AddLine({g.x(g.s.now_s), g.top.y}, {g.x(g.s.now_s), bottom}, g.pal.cursor, 2 * g.scale);
  g.dl->PopClipRect();
  draw_time_axis(g, bottom);
}

// The mouse over the timeline: the wheel zooms around it, a message under it shows a
// tooltip and is selected by a click, and a drag scrubs a replay.
bool handle_mouse(const Grid& g, ImVec2 mouse, int nearest, ViewSettings& v, Commands& commands) {
  const Snapshot& s = g.s;
  bool changed = false;
  ImGui::InvisibleButton("timeline_canvas", g.avail);
  if (ImGui::IsItemHovered()) {
    const float wheel = ImGui::GetIO().MouseWheel;
    if (wheel != 0) {
      const double at = g.t0 + (mouse.x - g.x0) / (g.x1 - g.x0) * g.span;
      const double f = wheel > 0 ? 0.7 : 1 / 0.7;
      v.timeline_span_s = g.span * f;
      v.timeline_end_s = at + (g.t1 - at) * f;
      changed = true;
    }
    if (nearest >= 0) {
      const MessageView& m = s.messages[nearest];
      ImGui::SetTooltip("%s -> %s, %s, %s\nclick to select", lane_label(s.summary, m.src).c_str(),
                        lane_label(s.summary, m.dst).c_str(), m.op,
                        format_bytes(static_cast<double>(m.bytes)).c_str());
      if (ImGui::IsItemClicked())
        commands.push(Command{.kind = CommandKind::select_message, .index = nearest});
    }
  }
  if (!s.controls.live && ImGui::IsItemActive() && nearest < 0) {
    const double t = g.t0 + std::clamp((mouse.x - g.x0) / (g.x1 - g.x0), 0.0f, 1.0f) * g.span;
    commands.push(Command{.kind = CommandKind::seek, .value = t});
  }
  // A live run: dragging scrolls (and stops following until "follow now").
  const float drag_px = ImGui::GetIO().MouseDelta.x;
  if (s.controls.live && ImGui::IsItemActive() && drag_px != 0) {
    v.timeline_span_s = g.span;
    v.timeline_end_s = std::max(g.span, g.t1 - drag_px / (g.x1 - g.x0) * g.span);
    changed = true;
  }
  return changed;
}

}  // namespace

void draw_timeline(const Snapshot& s, Commands& commands) {
  const std::pair<double, double> window = visible_window(s);
  ViewSettings v = s.view;
  bool changed = zoom_buttons(s, window.first, window.second, v);
  draw_timeline_legend(s, dense_messages(s, window.first, window.second));
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 top = ImGui::GetCursorScreenPos();
  if (avail.x < 60 || avail.y < 30 || s.world == 0) {
    if (changed) commands.push(Command{.kind = CommandKind::set_view, .view = v});
    ImGui::Dummy(avail);
    return;
  }
  const Grid g = grid_of(s, top, avail, window.first, window.second);
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  draw_rows(g);
  g.dl->PushClipRect({g.x0, top.y}, {g.x1, top.y + avail.y}, true);
  draw_dropped(g);
  draw_slices(g);
  const VisibleMessages visible = visible_messages(g, mouse);
  draw_messages(g, visible);
  draw_cursor_and_axis(g);  // pops the clip rectangle
  changed |= handle_mouse(g, mouse, visible.nearest, v, commands);
  if (changed) commands.push(Command{.kind = CommandKind::set_view, .view = v});
}

}  // namespace dsgd::gui
