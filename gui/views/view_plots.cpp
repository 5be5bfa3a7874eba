// The convergence view (loss and accuracy against step or model time, log toggle, earlier
// runs overlaid) and the gradient averaging view (each rank's tensor as bars, coloured by
// ring chunk, brightening as contributions accumulate; one colour for the other
// algorithms, whose buffer is shown whole). Plots are drawn with the draw list:
// ImPlot is not in Debian.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <imgui.h>

#include "gui/model/lane_label.h"
#include "gui/model/contrast.h"
#include "gui/model/replay_marks.h"
#include "gui/views/axis.h"
#include "gui/views/legend.h"
#include "gui/views/theme.h"
#include "gui/views/views.h"

namespace dsgd::gui {
namespace {

// The current run's loss and test accuracy in colours apart from each other and from the
// earlier runs' (grey, green, purple, brown); training accuracy in the dim text colour.
constexpr Rgba kLossColour = rgba(255, 130, 0), kTestAccuracyColour = rgba(30, 120, 240);
constexpr Rgba kEarlierColours[] = {rgba(128, 128, 128), rgba(50, 170, 70), rgba(160, 90, 230),
                                    rgba(150, 100, 50)};
// Earlier runs named in the legend (all are drawn).
constexpr size_t kEarlierInLegend = 3;
// `dsgd compare`'s runs (--compare): the Okabe-Ito colours and others apart from the current
// run's orange and blue, each readable on the dark and the light theme's plot.
constexpr Rgba kComparedColours[] = {rgba(0, 158, 115),   rgba(204, 121, 167), rgba(86, 180, 233),
                                     rgba(150, 150, 150), rgba(214, 39, 40),   rgba(148, 103, 189),
                                     rgba(188, 189, 34),  rgba(140, 86, 75)};

// Whether curve `index` is the run being shown (live or replayed), not a compared or
// earlier one.
bool is_current(const Snapshot& s, size_t index) {
  return index + 1 == s.curves.size() && index >= s.compared_curves;
}

Rgba curve_colour(const Snapshot& s, size_t index) {
  if (index < s.compared_curves) return kComparedColours[index % std::size(kComparedColours)];
  if (is_current(s, index)) return kLossColour;
  return kEarlierColours[(index - s.compared_curves) % 4];
}

Rgba chunk_colour(int chunk, int chunks, float intensity) {
  // Hues around the wheel, darker while few contributions have arrived.
  const float h = chunks > 0 ? static_cast<float>(chunk) / chunks : 0;
  float r, g, b;
  ImGui::ColorConvertHSVtoRGB(h, 0.75f, 0.35f + 0.65f * intensity, r, g, b);
  return rgba(static_cast<int>(r * 255), static_cast<int>(g * 255), static_cast<int>(b * 255));
}

// The latest test accuracy of a curve, or -1.
double last_test_accuracy(const Curve& c) {
  for (auto it = c.points.rbegin(); it != c.points.rend(); ++it)
    if (it->test_accuracy >= 0) return it->test_accuracy;
  return -1;
}

// The toggles, then the legend: the current run's loss, test and training accuracy with
// their latest values, every compared run (--compare) and the last few earlier runs.
void convergence_header(const Snapshot& s, Commands& commands, const Palette& pal) {
  ViewSettings v = s.view;
  bool changed = ImGui::Checkbox(tr("log scale"), &v.log_loss);
  const char* vs_time = tr("vs model time");
  same_line_if_fits(check_box_width(vs_time));
  changed |= ImGui::Checkbox(vs_time, &v.loss_vs_time);
  if (changed) commands.push(Command{.kind = CommandKind::set_view, .view = v});
  std::vector<LegendEntry> legend;
  const size_t n = s.curves.size();
  for (size_t ci = 0; ci < s.compared_curves; ++ci)
    legend.push_back({Swatch::line, curve_colour(s, ci), s.curves[ci].label});
  const size_t first_earlier =
      std::max(s.compared_curves, n > kEarlierInLegend + 1 ? n - kEarlierInLegend - 1 : 0);
  for (size_t ci = first_earlier; ci + 1 < n; ++ci)
    legend.push_back({Swatch::line, curve_colour(s, ci),
                      fmt::format("{} ({})", s.curves[ci].label, tr("earlier run"))});
  // No legend for a plot not drawn yet.
  if (n > s.compared_curves && !s.curves.back().points.empty()) {
    const Curve& c = s.curves.back();
    const double accuracy = last_test_accuracy(c);
    legend.push_back(
        {Swatch::line, kLossColour, fmt::format("{} {:.3f}", tr("loss"), c.points.back().loss)});
    legend.push_back({Swatch::dot, kTestAccuracyColour,
                      accuracy < 0
                          ? std::string(tr("test accuracy"))
                          : fmt::format("{} {:.1f}%", tr("test accuracy"), 100 * accuracy)});
    legend.push_back({Swatch::small_dot, pal.dim_text, tr("training accuracy")});
  }
  draw_legend(legend, pal.text, /*same_line=*/true);
}

// The plot's box and axes: x is the step or model time, y the loss (left axis) and the
// accuracy 0..1 (right axis).
struct Plot {
  const Snapshot& s;
  Palette pal;
  float em;
  ImDrawList* dl;
  ImVec2 top, p0, p1;
  float right_edge;  // of the view's content
  Axis ax, ay, accuracy;

  double x_of(const CurvePoint& p) const {
    return s.view.loss_vs_time ? p.model_s : static_cast<double>(p.step);
  }
  float x(double v) const { return p0.x + static_cast<float>(ax.to_unit(v)) * (p1.x - p0.x); }
  float y(double loss) const { return p1.y - static_cast<float>(ay.to_unit(loss)) * (p1.y - p0.y); }
  float y_accuracy(double a) const { return p1.y - static_cast<float>(a) * (p1.y - p0.y); }
};

// The smallest and largest finite value (positive, for a log axis); {0, 1} when none.
std::pair<double, double> finite_range(const std::vector<double>& values, bool log) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double v : values)
    if (std::isfinite(v) && (!log || v > 0)) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  if (!std::isfinite(lo)) return {log ? 0.1 : 0, 1};
  return {lo, hi};
}

// The x axis's title: "training step" or "model time".
const char* x_title(const Snapshot& s) {
  return s.view.loss_vs_time ? tr("model time") : tr("training step");
}

// The axes fitted to the box left after the header: the loss's title (turned on its side)
// and labels on the left, the accuracy's on the right, x's labels below with its title at
// their right end.
Plot plot_of(const Snapshot& s, ImVec2 top, ImVec2 avail, const std::vector<double>& xs,
             const std::vector<double>& losses) {
  Plot p{.s = s,
         .pal = palette_for(s.view.theme),
         .em = ImGui::GetFontSize(),
         .dl = ImGui::GetWindowDrawList(),
         .top = top};
  const float line = ImGui::GetTextLineHeight();
  const float plot_h = avail.y - 1.5f * line - 0.2f * p.em;  // x labels below, half a line above
  const auto [loss_lo, loss_hi] = finite_range(losses, s.view.log_loss);
  p.ay = fit_axis(loss_lo, loss_hi, plot_h, false, s.view.log_loss, TickFormat::number, true);
  p.accuracy = fit_axis(0, 1, plot_h, false, false, TickFormat::percent, false);
  // A title on its side takes a line's height of width.
  const float left = line + widest_label_px(p.ay) + 0.5f * p.em;
  const float right = line + widest_label_px(p.accuracy) + 0.5f * p.em;
  p.right_edge = top.x + avail.x;
  p.p0 = {top.x + left, top.y + 0.5f * line};
  p.p1 = {p.right_edge - right, p.p0.y + plot_h};
  const auto [x_lo, x_hi] = finite_range(xs, false);
  p.ax = fit_axis(std::min(0.0, x_lo), x_hi, p.p1.x - p.p0.x, true, false,
                  s.view.loss_vs_time ? TickFormat::seconds : TickFormat::number, true);
  return p;
}

// Text turned a quarter left (read from bottom to top), centred on `centre`: ImGui draws
// text only upright, so its quads are turned in the draw list after it.
void add_text_on_side(ImDrawList* dl, ImVec2 centre, Rgba colour, const char* text) {
  const ImVec2 size = ImGui::CalcTextSize(text);
  const int first = dl->VtxBuffer.Size;
  // Clipped to the text upright and turned (ImGui drops glyphs outside the clip rectangle
  // before they are turned into it).
  const float r = std::max(size.x, size.y) / 2;
  dl->PushClipRect({centre.x - r, centre.y - r}, {centre.x + r, centre.y + r}, false);
  dl->AddText({centre.x - size.x / 2, centre.y - size.y / 2}, colour, text);
  dl->PopClipRect();
  for (int i = first; i < dl->VtxBuffer.Size; ++i) {
    ImVec2& v = dl->VtxBuffer[i].pos;
    const float dx = v.x - centre.x, dy = v.y - centre.y;
    v = {centre.x + dy, centre.y - dx};
  }
}

// The titles: the loss's on the left edge, the accuracy's on the right, each on its side
// beside the swatch of what it measures; x's after its labels.
void draw_axis_titles(const Plot& p) {
  const float line = ImGui::GetTextLineHeight(), mid_y = (p.p0.y + p.p1.y) / 2;
  const char* loss = tr("loss");
  const char* accuracy = tr("accuracy");
  const float loss_half = ImGui::CalcTextSize(loss).x / 2 + 0.3f * p.em;
  const float accuracy_half = ImGui::CalcTextSize(accuracy).x / 2 + 0.3f * p.em;
  add_text_on_side(p.dl, {p.top.x + line / 2, mid_y}, p.pal.text, loss);
  p.dl->AddLine({p.top.x + line / 2, mid_y + loss_half},
                {p.top.x + line / 2, mid_y + loss_half + 0.9f * p.em}, kLossColour, 0.16f * p.em);
  add_text_on_side(p.dl, {p.right_edge - line / 2, mid_y}, p.pal.text, accuracy);
  p.dl->AddCircleFilled({p.right_edge - line / 2, mid_y + accuracy_half + 0.3f * p.em},
                        0.25f * p.em, kTestAccuracyColour);
  const char* title = x_title(p.s);
  p.dl->AddText({p.p1.x - ImGui::CalcTextSize(title).x, p.p1.y + 0.2f * p.em}, p.pal.text, title);
}

// Grid lines at the loss's and x's ticks, labels beside and below; the accuracy's labels
// on the right.
void draw_axes(const Plot& p) {
  const float half = ImGui::GetTextLineHeight() / 2, line = 2 * half;
  for (const Tick& t : p.ay.ticks) {
    const float gy = p.y(t.value);
    p.dl->AddLine({p.p0.x, gy}, {p.p1.x, gy}, p.pal.grid);
    const float w = ImGui::CalcTextSize(t.label.c_str()).x;
    p.dl->AddText({p.p0.x - 0.25f * p.em - w, gy - half}, p.pal.text, t.label.c_str());
  }
  for (const Tick& t : p.accuracy.ticks)
    p.dl->AddText({p.p1.x + 0.25f * p.em, p.y_accuracy(t.value) - half}, p.pal.text,
                  t.label.c_str());
  const float title_x = p.p1.x - ImGui::CalcTextSize(x_title(p.s)).x - 0.5f * p.em;
  for (const Tick& t : p.ax.ticks) {
    const float gx = p.x(t.value), w = ImGui::CalcTextSize(t.label.c_str()).x;
    p.dl->AddLine({gx, p.p0.y}, {gx, p.p1.y}, p.pal.grid);
    const float at = std::max(gx - w / 2, p.top.x + line);
    if (at + w <= title_x)  // the last label makes way for the title
      p.dl->AddText({at, p.p1.y + 0.2f * p.em}, p.pal.text, t.label.c_str());
  }
  p.dl->AddRect(p.p0, p.p1, p.pal.dim_text);
  draw_axis_titles(p);
}

// Loss solid, test accuracy as dots against the right axis (the current run's training
// accuracy as small dots; an earlier run's test accuracy as small dots in its colour).
void draw_curve(const Plot& p, size_t ci) {
  const Curve& c = p.s.curves[ci];
  const bool current = is_current(p.s, ci);
  const Rgba colour = curve_colour(p.s, ci);
  std::vector<ImVec2> line;
  line.reserve(c.points.size());
  for (const CurvePoint& point : c.points)
    line.push_back({p.x(p.x_of(point)), p.y(point.loss)});
  if (line.size() >= 2)
    p.dl->AddPolyline(line.data(), static_cast<int>(line.size()), colour, 0,
                      (current ? 0.16f : 0.09f) * p.em);
  for (const CurvePoint& point : c.points) {
    const ImVec2 at{p.x(p.x_of(point)), 0};
    if (point.test_accuracy >= 0)
      p.dl->AddCircleFilled({at.x, p.y_accuracy(point.test_accuracy)},
                            (current ? 0.25f : 0.15f) * p.em,
                            current ? kTestAccuracyColour : colour);
    else if (point.train_accuracy >= 0 && current)
      p.dl->AddCircleFilled({at.x, p.y_accuracy(point.train_accuracy)}, 0.1f * p.em,
                            p.pal.dim_text);
  }
}

// Replay: the time cursor on the current curve, at the last step finished by then, with its
// loss (replay_marks.h); the label on the side of the cursor that has room for it.
void draw_replay_cursor(const Plot& p) {
  if (p.s.controls.live || p.s.curves.empty() || !is_current(p.s, p.s.curves.size() - 1)) return;
  const Curve& c = p.s.curves.back();
  const std::optional<size_t> at = curve_point_at(c, step_at_cursor(p.s));
  if (!at) return;
  const CurvePoint& point = c.points[*at];
  const float x = p.x(p.x_of(point)), y = p.y(point.loss);
  p.dl->AddLine({x, p.p0.y}, {x, p.p1.y}, p.pal.cursor, 0.12f * p.em);
  p.dl->AddCircleFilled({x, y}, 0.3f * p.em, p.pal.cursor);
  const std::string label =
      fmt::format("{} {}: {} {:.3f}", tr("step"), point.step, tr("loss"), point.loss);
  const float w = ImGui::CalcTextSize(label.c_str()).x, gap = 0.3f * p.em;
  p.dl->AddText({x + gap + w < p.p1.x ? x + gap : x - gap - w, p.p0.y + 0.1f * p.em}, p.pal.cursor,
                label.c_str());
}

}  // namespace

void draw_convergence(const Snapshot& s, Commands& commands) {
  const Palette pal = palette_for(s.view.theme);
  convergence_header(s, commands, pal);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 top = ImGui::GetCursorScreenPos();
  const float em = ImGui::GetFontSize();
  if (avail.x < 6 * em || avail.y < 3 * em) return;
  std::vector<double> xs, losses;
  for (const Curve& c : s.curves)
    for (const CurvePoint& point : c.points) {
      xs.push_back(s.view.loss_vs_time ? point.model_s : static_cast<double>(point.step));
      losses.push_back(point.loss);
    }
  if (losses.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(pal.dim_text));
    ImGui::TextWrapped("%s", s.controls.live
                                 ? tr("waiting for the first training step...")
                                 : tr("no loss curve (replay a trace with --metrics FILE)"));
    ImGui::PopStyleColor();
    return;
  }
  const Plot p = plot_of(s, top, avail, xs, losses);
  if (p.p1.x - p.p0.x < em || p.p1.y - p.p0.y < em) return;
  draw_axes(p);
  p.dl->PushClipRect(p.p0, p.p1, true);
  for (size_t ci = 0; ci < s.curves.size(); ++ci)
    draw_curve(p, ci);
  draw_replay_cursor(p);
  p.dl->PopClipRect();
  ImGui::Dummy(avail);
}

namespace {

// "2 of 4 ranks hold the full sum  |  all_reduce ring: chunk colours, brightness = ranks
// summed"; once ranks crashed "0 of 3 alive ranks hold the full sum (1 crashed)  |  ...".
// The count first: where the caption is cut, it is what stays.
void gradients_caption(const Snapshot& s) {
  const GradientView& g = s.gradients;
  std::string out =
      g.alive == s.world
          ? fmt::format(fmt::runtime(tr("{} of {} ranks hold the full sum")), g.holding_sum,
                        s.world)
          : fmt::format(fmt::runtime(tr("{} of {} alive ranks hold the full sum ({} crashed)")),
                        g.holding_sum, g.alive, s.world - g.alive);
  out += "  |  ";
  out += g.label;
  if (g.ring) out += std::string(": ") + tr("chunk colours, brightness = ranks summed");
  ImGui::TextWrapped("%s", out.c_str());
}

// The values on the demo's bars: "28", "3.5" (a sum / N).
std::string bar_number(float value) {
  return fmt::format("{:.3g}", value);
}

// The demo: a bar per element between from and to (height = its value, colour = its chunk,
// brighter as more ranks are summed in while showing the values now), the value written on
// it, or just above a short one.
void demo_bars(const Snapshot& s, const std::vector<float>& values, int r, ImVec2 from, ImVec2 to,
               float max_value) {
  const GradientView& g = s.gradients;
  const Palette pal = palette_for(s.view.theme);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float em = ImGui::GetFontSize(), text_h = ImGui::GetTextLineHeight();
  const bool now = s.view.demo_values == DemoValues::now;
  const float bw = (to.x - from.x) / g.elements;
  for (int i = 0; i < g.elements; ++i) {
    const int c = g.element_chunk[i];
    const float k = now ? static_cast<float>(g.contributions[r][c]) / s.world : 1.0f;
    const Rgba colour = chunk_colour(c, g.chunks, k);
    const float h = max_value > 0 ? (to.y - from.y) * std::abs(values[i]) / max_value : 0;
    const ImVec2 bar0{from.x + i * bw + 1, to.y - h}, bar1{from.x + (i + 1) * bw - 1, to.y};
    dl->AddRectFilled(bar0, bar1, colour);
    const std::string value = bar_number(values[i]);
    if (bw < ImGui::CalcTextSize(value.c_str()).x + 0.4f * em || to.y - from.y < text_h) continue;
    const bool inside = h >= text_h;  // on the bar, or just above a short one
    if (!inside && bar0.y - text_h < from.y) continue;
    dl->AddText({bar0.x + 0.2f * em, inside ? bar0.y : bar0.y - text_h},
                inside ? text_colour_on(colour) : pal.text, value.c_str());
  }
}

// Training: a strip of chunks between from and to, brighter as more ranks are summed in,
// each with its count.
void chunk_strip(const Snapshot& s, int r, ImVec2 from, ImVec2 to) {
  const GradientView& g = s.gradients;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float em = ImGui::GetFontSize(), text_h = ImGui::GetTextLineHeight();
  const float cw = (to.x - from.x) / std::max(1, g.chunks);
  for (int c = 0; c < g.chunks; ++c) {
    const Rgba colour =
        chunk_colour(c, g.chunks, static_cast<float>(g.contributions[r][c]) / s.world);
    dl->AddRectFilled({from.x + c * cw + 1, from.y}, {from.x + (c + 1) * cw - 1, to.y}, colour);
    const std::string count = fmt::format("{}/{}", g.contributions[r][c], s.world);
    if (cw >= ImGui::CalcTextSize(count.c_str()).x + 0.5f * em && to.y - from.y >= 0.75f * text_h)
      dl->AddText({from.x + c * cw + 0.25f * em, (from.y + to.y - text_h) / 2},
                  text_colour_on(colour), count.c_str());
  }
}

// Above the rows: in the demo where the all_reduce stands and which values the bars show
// (view_demo.cpp), returning them; in training the caption and, where there is room, why a
// sum is the mean.
std::vector<std::vector<float>> gradients_header(const Snapshot& s, Commands& commands,
                                                 const Palette& pal) {
  const GradientView& g = s.gradients;
  if (g.elements > 0 && static_cast<int>(g.values.size()) == s.world)
    return demo_header(s, commands);
  gradients_caption(s);
  // The note only where every rank's row keeps its label after it.
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const char* note = tr("each rank scales its gradient by 1/B first: the sum is the mean");
  const float note_h = line * std::ceil(ImGui::CalcTextSize(note).x /
                                        std::max(1.0f, ImGui::GetContentRegionAvail().x));
  if (ImGui::GetContentRegionAvail().y - note_h < s.world * ImGui::GetTextLineHeight()) return {};
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(pal.dim_text));
  ImGui::TextWrapped("%s", note);
  ImGui::PopStyleColor();
  return {};
}

}  // namespace

void draw_gradients(const Snapshot& s, Commands& commands) {
  if (s.world == 0) {
    ImGui::TextUnformatted(tr("No ranks yet."));
    return;
  }
  if (s.summary.ranks > 0) {  // a lane's messages are joined across its ranks
    ImGui::TextWrapped("%s", tr("A summary of many ranks: open a trace written with "
                                "--trace-groups 0 to follow each rank's sums."));
    return;
  }
  const Palette pal = palette_for(s.view.theme);
  const std::vector<std::vector<float>> values = gradients_header(s, commands, pal);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 top = ImGui::GetCursorScreenPos();
  const float em = ImGui::GetFontSize(), text_h = ImGui::GetTextLineHeight();
  if (avail.x < 4 * em || avail.y < em) return;
  const float row_h = avail.y / s.world, gap = std::min(3.0f, row_h / 4);
  // Rows shorter than a line label themselves in a smaller font, down to half the size.
  const float label_px = std::min(em, 0.95f * row_h * em / text_h);
  const bool labelled = label_px >= 0.5f * em;
  const std::string widest = lane_label(s.summary, s.world - 1);
  const float label_w = ImGui::CalcTextSize(widest.c_str()).x * label_px / em + 0.5f * em;
  float max_value = 0;
  for (const auto& row : values)
    for (float v : row)
      max_value = std::max(max_value, std::abs(v));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  for (int r = 0; r < s.world; ++r) {
    const float y0 = top.y + r * row_h, y1 = y0 + row_h - gap;
    if (labelled)
      dl->AddText(ImGui::GetFont(), label_px, {top.x, y0 + (row_h - label_px * text_h / em) / 2},
                  pal.text, lane_label(s.summary, r).c_str());
    const ImVec2 from{top.x + label_w, y0}, to{top.x + avail.x, y1};
    if (s.ranks[r].crashed) {  // what it held is lost with it: a grey row that says so
      dl->AddRectFilled(from, to, pal.node_crashed);
      dl->AddText({from.x + 0.4f * em, y0 + (row_h - text_h) / 2}, text_colour_on(pal.node_crashed),
                  tr("crashed"));
    } else if (!values.empty()) {
      demo_bars(s, values[r], r, from, to, max_value);
    } else {
      chunk_strip(s, r, from, to);
    }
  }
  ImGui::Dummy(avail);
}

}  // namespace dsgd::gui
