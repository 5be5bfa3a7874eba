// Where the time goes: one training step (the latest every rank finished, or one picked), a
// stacked bar per rank (compute, transfer, waiting, the rest), and a mark on each bar where its
// step would have ended had the collectives taken their alpha-beta prediction. A straggler
// shows as one long compute bar and the others' waiting. The numbers come from
// time_breakdown.h; this only draws them.
#include <algorithm>
#include <string>

#include <fmt/format.h>
#include <imgui.h>

#include "gui/model/time_breakdown.h"
#include "gui/views/theme.h"
#include "gui/views/views.h"
#include "sim/link_model.h"

namespace dsgd::gui {
namespace {

struct Part {
  const char* name;
  Rgba colour;
};
// compute, transfer, waiting, other: the timeline's compute and ring colours, a red that
// says "lost", a neutral grey.
constexpr Part kParts[] = {{"compute", rgba(70, 130, 220)},
                           {"transfer", rgba(255, 140, 0)},
                           {"waiting", rgba(215, 45, 45)},
                           {"other", rgba(150, 150, 150)}};

double part_s(const RankTime& t, int part) {
  const double parts[] = {t.compute_s, t.transfer_s, t.waiting_s, t.other_s};
  return parts[part];
}

// Black or white, whichever reads on `fill`.
Rgba text_on(Rgba fill) {
  const int r = fill & 0xFF, g = fill >> 8 & 0xFF, b = fill >> 16 & 0xFF;
  return 299 * r + 587 * g + 114 * b > 150000 ? rgba(0, 0, 0) : rgba(255, 255, 255);
}

// "<", ">", "latest": which step to show (ViewSettings::time_step, 0 = the latest finished).
int64_t step_picker(const Snapshot& s, const std::vector<int64_t>& steps, Commands& commands) {
  const int64_t finished = latest_complete_step(s);
  const int64_t latest = finished > 0 ? finished : steps.back();
  const int64_t shown = s.view.time_step > 0 ? s.view.time_step : latest;
  const auto at = std::lower_bound(steps.begin(), steps.end(), shown);
  ViewSettings v = s.view;
  bool changed = false;
  if (ImGui::ArrowButton("earlier", ImGuiDir_Left) && at != steps.begin()) {
    v.time_step = *std::prev(at);
    changed = true;
  }
  ImGui::SameLine();
  if (ImGui::ArrowButton("later", ImGuiDir_Right) && at != steps.end()) {
    const auto next = std::next(at);
    v.time_step = next == steps.end() || *next >= latest ? 0 : *next;
    changed = true;
  }
  ImGui::SameLine();
  if (ImGui::Button(tr("latest"))) {
    v.time_step = 0;
    changed = true;
  }
  if (changed) commands.push(Command{.kind = CommandKind::set_view, .view = v});
  ImGui::SameLine();
  ImGui::Text("%s %lld%s", tr("step"), static_cast<long long>(shown),
              s.view.time_step > 0 ? "" : tr(" (the latest finished)"));
  return shown;
}

// The legend's width, to put it beside the step picker when there is room.
float legend_width() {
  const float side = ImGui::GetTextLineHeight() * 0.8f, gap = ImGui::GetStyle().ItemSpacing.x;
  float w = 0;
  for (const Part& p : kParts)
    w += side + gap + ImGui::CalcTextSize(tr(p.name)).x + side * 1.5f;
  return w + side + gap + ImGui::CalcTextSize(tr("alpha-beta prediction")).x;
}

void legend(const Palette& pal) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float side = ImGui::GetTextLineHeight() * 0.8f;
  for (const Part& p : kParts) {
    const ImVec2 at = ImGui::GetCursorScreenPos();
    dl->AddRectFilled({at.x, at.y + side * 0.15f}, {at.x + side, at.y + side * 1.15f}, p.colour);
    ImGui::Dummy({side, side});
    ImGui::SameLine();
    ImGui::TextUnformatted(tr(p.name));
    ImGui::SameLine(0, side * 1.5f);
  }
  const ImVec2 at = ImGui::GetCursorScreenPos();
  dl->AddLine({at.x + side / 2, at.y}, {at.x + side / 2, at.y + ImGui::GetTextLineHeight()},
              pal.text, 3);
  ImGui::Dummy({side, side});
  ImGui::SameLine();
  ImGui::TextUnformatted(tr("alpha-beta prediction"));
}

// The slowest rank and the straggler, then the prediction with its formula and link.
void summary(const StepTime& t) {
  const StepSummary sum = summarize(t);
  if (sum.slowest < 0) return;
  std::string text = fmt::format(fmt::runtime(tr("step {}{}: the slowest rank, rank {}, took {}.")),
                                 t.step, t.complete ? "" : tr(" (not finished)"), sum.slowest,
                                 format_seconds(t.ranks[sum.slowest].total_s()));
  if (sum.straggler >= 0)
    text += fmt::format(
        " {}", fmt::format(fmt::runtime(tr("Rank {} computed {:.1f}x as long as the median "
                                           "rank: the others wait for it (red).")),
                           sum.straggler, sum.compute_ratio));
  ImGui::TextWrapped("%s", text.c_str());
  if (t.collective[0] == 0) return;
  text = fmt::format(fmt::runtime(tr("alpha-beta prediction for {} of {}: {} = {}, with a = {} "
                                     "latency and B = {} (the slowest link).")),
                     t.collective, format_bytes(static_cast<double>(t.bytes)), t.formula,
                     format_seconds(t.collective_predicted_s), sim::format_duration(t.alpha_s),
                     sim::format_bandwidth(t.bandwidth_Bps));
  if (t.collectives > 1)
    text += fmt::format(fmt::runtime(tr(" The step's {} collectives together: {}.")), t.collectives,
                        format_seconds(t.predicted_s));
  ImGui::TextWrapped("%s", text.c_str());
}

// Where the bars go: seconds from 0 to scale_s over x0 .. x1.
struct BarScale {
  float x0, x1;
  double scale_s;
  float x(double v) const { return x0 + static_cast<float>(v / scale_s) * (x1 - x0); }
};

// One rank's bar from y0 to y1: its parts, the prediction's mark through it, then the numbers
// over both, and the total after it.
void rank_bar(ImDrawList* dl, const Palette& pal, const BarScale& bs, const RankTime& r,
              double predicted_s, float y0, float y1) {
  const float text_h = ImGui::GetTextLineHeight(), text_y = (y0 + y1 - text_h) / 2;
  double at = 0;
  for (int p = 0; p < 4; ++p) {
    dl->AddRectFilled({bs.x(at), y0}, {bs.x(at + part_s(r, p)), y1}, kParts[p].colour);
    at += part_s(r, p);
  }
  const float mark = bs.x(r.compute_s + predicted_s);
  if (predicted_s > 0) dl->AddLine({mark, y0 - 3}, {mark, y1 + 3}, pal.text, 2);
  at = 0;
  for (int p = 0; p < 4 && y1 - y0 >= text_h; ++p) {
    const float a = bs.x(at), b = bs.x(at + part_s(r, p));
    at += part_s(r, p);
    const std::string label = format_seconds(part_s(r, p));
    if (b - a > ImGui::CalcTextSize(label.c_str()).x + 6)
      dl->AddText({a + 3, text_y}, text_on(kParts[p].colour), label.c_str());
  }
  if (y1 - y0 >= text_h * 0.8f)  // after the bar, and after the mark when it lies beyond it
    dl->AddText({std::max(bs.x(r.total_s()), predicted_s > 0 ? mark : 0.0f) + 6, text_y}, pal.text,
                format_seconds(r.total_s()).c_str());
}

// One bar per rank, all on one scale: the longest step, or a mark beyond it.
void bars(const Snapshot& s, const StepTime& t, const Palette& pal) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 top = ImGui::GetCursorScreenPos(), avail = ImGui::GetContentRegionAvail();
  const float label_w = ImGui::CalcTextSize(fmt::format("{} 00 ", tr("rank")).c_str()).x;
  BarScale bs{.x0 = top.x + label_w,
              .x1 = top.x + avail.x - ImGui::CalcTextSize("000.0 ms").x - 8,
              .scale_s = 1e-12};
  const float row_h = avail.y / std::max(1, s.world);
  if (bs.x1 - bs.x0 < 20 || row_h < 2) return;
  for (const RankTime& r : t.ranks)
    bs.scale_s = std::max({bs.scale_s, r.total_s(), r.compute_s + t.predicted_s});
  const float text_h = ImGui::GetTextLineHeight();
  for (int rank = 0; rank < static_cast<int>(t.ranks.size()); ++rank) {
    const float y0 = top.y + rank * row_h + row_h * 0.12f, y1 = top.y + (rank + 1) * row_h;
    if (row_h >= text_h)
      dl->AddText({top.x, (y0 + y1 - text_h) / 2}, pal.text,
                  fmt::format("{} {}", tr("rank"), rank).c_str());
    if (t.ranks[rank].seen) rank_bar(dl, pal, bs, t.ranks[rank], t.predicted_s, y0, y1);
  }
  ImGui::Dummy(avail);
}

}  // namespace

void draw_time_breakdown(const Snapshot& s, Commands& commands) {
  const std::vector<int64_t> steps = breakdown_steps(s);
  if (steps.empty() || s.world == 0) {
    ImGui::TextWrapped("%s", tr("No training step yet. Where the time goes is shown per "
                                "training step; the all_reduce demo has none."));
    return;
  }
  const Palette pal = palette_for(s.view.theme);
  const StepTime t = step_time(s, step_picker(s, steps, commands));
  const float gap = ImGui::GetTextLineHeight() * 2;
  ImGui::SameLine(0, gap);
  if (ImGui::GetContentRegionAvail().x < legend_width()) ImGui::NewLine();
  legend(pal);
  summary(t);
  bars(s, t, pal);
}

}  // namespace dsgd::gui
