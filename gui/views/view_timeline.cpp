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

#include "gui/views/theme.h"
#include "gui/views/views.h"

namespace dsgd::gui {
namespace {

// More visible messages than this and the timeline draws their ends, not lines (see below).
constexpr size_t kMaxMessageLines = 400;

// The visible time window [t0, t1].
std::pair<double, double> time_window(const Snapshot& s) {
  const double end = s.view.timeline_end_s > 0
                         ? s.view.timeline_end_s
                         : std::max(s.now_s, s.controls.live ? s.now_s : s.end_s);
  double span = s.view.timeline_span_s;
  if (span <= 0)
    span = s.controls.live ? std::min(0.5, std::max(1e-3, end - s.begin_s))
                           : std::max(1e-9, s.end_s - s.begin_s);
  const double t1 = s.view.timeline_span_s <= 0 && !s.controls.live ? s.end_s : end;
  return {t1 - span, t1};
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

void draw_timeline(const Snapshot& s, Commands& commands) {
  const Palette pal = palette_for(s.view.theme);
  const float scale = s.view.ui_scale;
  // Plain variables, not a structured binding: the lambdas below capture them, which
  // clang before 16 (the sanitizer builds use clang 14) does not allow for bindings.
  const std::pair<double, double> window = time_window(s);
  const double t0 = window.first, t1 = window.second;
  ViewSettings v = s.view;
  bool changed = false;
  if (ImGui::Button("+")) {
    v.timeline_span_s = (t1 - t0) / 2;
    v.timeline_end_s = s.controls.live ? 0 : (t0 + t1) / 2 + v.timeline_span_s / 2;
    changed = true;
  }
  ImGui::SameLine();
  if (ImGui::Button("-")) {
    v.timeline_span_s = (t1 - t0) * 2;
    changed = true;
  }
  ImGui::SameLine();
  if (ImGui::Button(s.view.chinese ? "全部 all" : "all")) {
    v.timeline_span_s = s.controls.live ? std::max(1e-3, s.now_s - s.begin_s) : 0;
    v.timeline_end_s = 0;
    changed = true;
  }
  ImGui::SameLine();
  ImGui::Text("%s .. %s  (%s time)", format_seconds(t0).c_str(), format_seconds(t1).c_str(),
              s.time_base == TimeBase::model ? "model" : "network");

  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 top = ImGui::GetCursorScreenPos();
  if (avail.x < 60 || avail.y < 30 || s.world == 0) {
    if (changed) commands.push(Command{.kind = CommandKind::set_view, .view = v});
    ImGui::Dummy(avail);
    return;
  }
  const float label_w = 58 * scale;
  const float x0 = top.x + label_w, x1 = top.x + avail.x - 6;
  const float axis_h = 16 * scale;
  const float row_h = (avail.y - axis_h) / s.world;
  const double span = std::max(1e-12, t1 - t0);
  const auto X = [&](double t) { return x0 + static_cast<float>((t - t0) / span) * (x1 - x0); };
  const auto lane_y = [&](int rank, Lane lane) {
    return top.y + rank * row_h + (lane == Lane::compute ? 0.08f : 0.52f) * row_h;
  };
  const float lane_h = row_h * 0.40f;

  for (int r = 0; r < s.world; ++r) {
    const float y = top.y + r * row_h;
    dl->AddLine({top.x, y}, {x1, y}, pal.grid);
    if (row_h >= 9 * scale)
      dl->AddText({top.x + 4, y + (row_h - 14 * scale) / 2}, pal.text,
                  fmt::format("rank {}", r).c_str());
  }
  dl->PushClipRect({x0, top.y}, {x1, top.y + avail.y}, true);
  for (const SliceView& sl : s.slices) {
    if (sl.end_s < t0 || sl.begin_s > t1) continue;
    const float y = lane_y(sl.rank, sl.lane);
    const float a = X(sl.begin_s), b = std::max(X(sl.end_s), a + 1.0f);
    dl->AddRectFilled({a, y}, {b, y + lane_h}, colour_for_op(sl.name));
    if (b - a > 60 * scale && lane_h > 12 * scale)
      dl->AddText({a + 3, y + (lane_h - 14 * scale) / 2}, rgba(0, 0, 0), sl.name);
  }
  // Messages: send (comm lane of src) to arrival (comm lane of dst). Without anti-aliasing:
  // an anti-aliased line is a textured quad, and a thousand long diagonal ones cost a
  // software renderer (Mesa llvmpipe under Xvfb) most of a frame; one-pixel lines look the
  // same at this size.
  const ImDrawListFlags flags = dl->Flags;
  dl->Flags &= ~(ImDrawListFlags_AntiAliasedLines | ImDrawListFlags_AntiAliasedLinesUseTex);
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  int nearest = -1;
  float nearest_d = 6 * scale;
  struct Visible {
    int index;
    ImVec2 a, b;
  };
  std::vector<Visible> visible;
  for (int i = 0; i < static_cast<int>(s.messages.size()); ++i) {
    const MessageView& m = s.messages[i];
    const double arrive = m.arrived ? m.arrive_s : std::min(m.arrive_s, s.now_s);
    if (arrive < t0 || m.send_s > t1) continue;
    const ImVec2 a{X(m.send_s), lane_y(m.src, Lane::comm) + lane_h / 2};
    const ImVec2 b{X(arrive), lane_y(m.dst, Lane::comm) + lane_h / 2};
    visible.push_back({i, a, b});
    const float d = distance_to_segment(mouse, a, b);
    if (d < nearest_d) {
      nearest_d = d;
      nearest = i;
    }
  }
  // Dense: past kMaxMessageLines lines the lanes vanish under a web of them (and a software
  // renderer spends most of a frame on it). Each message then shows as a tick where it
  // leaves and one where it arrives; the hovered and the selected message keep their line.
  const bool dense = visible.size() > kMaxMessageLines;
  for (const Visible& m : visible) {
    const bool selected = m.index == s.view.selected_message;
    const Rgba colour = selected ? pal.selection : colour_for_op(s.messages[m.index].op);
    if (!dense || selected || m.index == nearest) {
      dl->AddLine(m.a, m.b, colour, (selected ? 3.0f : 1.0f) * scale);
    } else {  // in the text colour: a tick in its op's colour would vanish into the slice
      const float h = lane_h / 2;
      dl->AddLine({m.a.x, m.a.y - h}, {m.a.x, m.a.y + h}, pal.text, scale);
      dl->AddLine({m.b.x, m.b.y - h}, {m.b.x, m.b.y + h}, pal.text, scale);
    }
  }
  if (dense) {
    const std::string note = fmt::format(
        "{} messages: their ends only (zoom in, or hover one, for lines)", visible.size());
    dl->AddText({x1 - ImGui::CalcTextSize(note.c_str()).x, top.y}, pal.dim_text, note.c_str());
  }
  dl->Flags = flags;
  if (s.now_s >= t0 && s.now_s <= t1)
    dl->AddLine({X(s.now_s), top.y}, {X(s.now_s), top.y + avail.y - axis_h}, pal.cursor, 2 * scale);
  dl->PopClipRect();
  for (int i = 0; i <= 4; ++i) {
    const double t = t0 + span * i / 4;
    const float x = X(t);
    dl->AddLine({x, top.y + avail.y - axis_h}, {x, top.y + avail.y - axis_h + 4}, pal.dim_text);
    const std::string label = format_seconds(t);
    dl->AddText(
        {std::min(x, x1 - ImGui::CalcTextSize(label.c_str()).x), top.y + avail.y - axis_h + 2},
        pal.dim_text, label.c_str());
  }

  ImGui::InvisibleButton("timeline_canvas", avail);
  if (ImGui::IsItemHovered()) {
    const float wheel = ImGui::GetIO().MouseWheel;
    if (wheel != 0) {  // zoom around the mouse
      const double at = t0 + (mouse.x - x0) / (x1 - x0) * span;
      const double f = wheel > 0 ? 0.7 : 1 / 0.7;
      v.timeline_span_s = span * f;
      v.timeline_end_s = at + (t1 - at) * f;
      changed = true;
    }
    if (nearest >= 0) {
      const MessageView& m = s.messages[nearest];
      ImGui::SetTooltip("rank %d -> %d, %s, %s\nclick to select", m.src, m.dst, m.op,
                        format_bytes(static_cast<double>(m.bytes)).c_str());
      if (ImGui::IsItemClicked())
        commands.push(Command{.kind = CommandKind::select_message, .index = nearest});
    }
  }
  if (!s.controls.live && ImGui::IsItemActive() && nearest < 0) {  // scrub the replay
    const double t = t0 + std::clamp((mouse.x - x0) / (x1 - x0), 0.0f, 1.0f) * span;
    commands.push(Command{.kind = CommandKind::seek, .value = t});
  }
  if (changed) commands.push(Command{.kind = CommandKind::set_view, .view = v});
}

}  // namespace dsgd::gui
