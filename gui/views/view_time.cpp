// Where the time goes: one training step (the latest every rank finished, or one picked), a
// stacked bar per rank (compute, transfer, waiting, the rest), and a mark on each bar where its
// step would have ended had the collectives taken their alpha-beta prediction. A straggler
// shows as one long compute bar and the others' waiting. The numbers come from
// time_breakdown.h; this only draws them.
#include <algorithm>
#include <string>

#include <fmt/format.h>
#include <imgui.h>

#include "gui/model/lane_label.h"
#include "gui/model/contrast.h"
#include "gui/model/time_breakdown.h"
#include "gui/views/axis.h"
#include "gui/views/legend.h"
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

// The parts' colours and the prediction's mark, beside the step picker where they fit.
void legend(const Palette& pal) {
  std::vector<LegendEntry> entries;
  for (const Part& p : kParts)
    entries.push_back({Swatch::box, p.colour, tr(p.name)});
  entries.push_back({Swatch::tick, pal.text, tr("alpha-beta prediction")});
  draw_legend(entries, pal.text, /*same_line=*/true);
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

// Where the bars go: seconds on `axis` (from 0) over x0 .. x1.
struct BarScale {
  float x0, x1;
  Axis axis;
  float x(double v) const { return x0 + static_cast<float>(axis.to_unit(v)) * (x1 - x0); }
};

// Grid lines at the axis's ticks from y0 to y1, under the bars, and their labels below y1.
void time_axis(ImDrawList* dl, const Palette& pal, const BarScale& bs, float y0, float y1,
               float left, float right) {
  for (const Tick& t : bs.axis.ticks) {
    const float x = bs.x(t.value), w = ImGui::CalcTextSize(t.label.c_str()).x;
    dl->AddLine({x, y0}, {x, y1}, pal.grid);
    dl->AddText({std::clamp(x - w / 2, left, right - w), y1 + 1}, pal.text, t.label.c_str());
  }
}

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
  if (predicted_s > 0)
    dl->AddLine({mark, y0 - 3}, {mark, y1 + 3}, pal.text, 0.12f * ImGui::GetFontSize());
  // A part's figure at its left end, or after the mark where the mark would cross it.
  const float em = ImGui::GetFontSize(), gap = 0.25f * em;
  at = 0;
  for (int p = 0; p < 4 && y1 - y0 >= text_h; ++p) {
    const float a = bs.x(at), b = bs.x(at + part_s(r, p));
    at += part_s(r, p);
    const std::string label = format_seconds(part_s(r, p));
    const float w = ImGui::CalcTextSize(label.c_str()).x;
    float x = a + gap;
    if (predicted_s > 0 && mark > x - gap && mark < x + w + gap) x = mark + gap;
    if (x + w + gap <= b) dl->AddText({x, text_y}, text_colour_on(kParts[p].colour), label.c_str());
  }
  if (y1 - y0 >= text_h * 0.8f)  // after the bar, and after the mark when it lies beyond it
    dl->AddText({std::max(bs.x(r.total_s()), predicted_s > 0 ? mark : 0.0f) + gap, text_y},
                pal.text, format_seconds(r.total_s()).c_str());
}

// "rank 2", and "rank 2 x3" for a rank the run made a straggler (its colour on the topology).
std::string rank_label(const Snapshot& s, int rank) {
  std::string label = lane_label(s.summary, rank);
  const double factor = rank < static_cast<int>(s.ranks.size()) ? s.ranks[rank].straggler : 1;
  if (factor != 1) label += fmt::format(" x{:g}", factor);
  return label;
}

// One bar per rank, all on one axis in seconds: to the longest step, or a mark beyond it.
void bars(const Snapshot& s, const StepTime& t, const Palette& pal) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 top = ImGui::GetCursorScreenPos(), avail = ImGui::GetContentRegionAvail();
  const float em = ImGui::GetFontSize(), text_h = ImGui::GetTextLineHeight();
  float label_w = 0;
  for (int rank = 0; rank < s.world; ++rank)
    label_w = std::max(label_w, ImGui::CalcTextSize(rank_label(s, rank).c_str()).x);
  const float x0 = top.x + label_w + 0.5f * em;
  const float x1 = top.x + avail.x - ImGui::CalcTextSize("000.0 ms").x - 0.5f * em;
  const float row_h = (avail.y - text_h) / std::max(1, s.world);  // the axis's labels below
  if (x1 - x0 < 2 * em || row_h < 2) return;
  double longest_s = 1e-6;
  for (const RankTime& r : t.ranks)
    longest_s = std::max({longest_s, r.total_s(), r.compute_s + t.predicted_s});
  const BarScale bs{
      .x0 = x0,
      .x1 = x1,
      .axis = fit_axis(0, longest_s, x1 - x0, true, false, TickFormat::seconds, true)};
  time_axis(dl, pal, bs, top.y, top.y + s.world * row_h, top.x, top.x + avail.x);
  for (int rank = 0; rank < static_cast<int>(t.ranks.size()); ++rank) {
    const float y0 = top.y + rank * row_h + row_h * 0.12f, y1 = top.y + (rank + 1) * row_h;
    const bool slow = rank < static_cast<int>(s.ranks.size()) && s.ranks[rank].straggler != 1;
    if (row_h >= 0.75f * text_h)  // a glyph is shorter than its line
      dl->AddText({top.x, (y0 + y1 - text_h) / 2}, slow ? pal.node_straggler : pal.text,
                  rank_label(s, rank).c_str());
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
  legend(pal);
  summary(t);
  bars(s, t, pal);
}

}  // namespace dsgd::gui
