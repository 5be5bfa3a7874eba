// The convergence view (loss and accuracy against step or model time, log toggle, earlier
// runs overlaid) and the gradient averaging view (each rank's tensor as bars, coloured by
// ring chunk, brightening as contributions accumulate; one colour for the other
// algorithms, whose buffer is shown whole). Plots are drawn with the draw list:
// ImPlot is not in Debian.
#include <algorithm>
#include <cfloat>
#include <cmath>

#include <fmt/format.h>
#include <imgui.h>

#include "gui/model/replay_marks.h"
#include "gui/views/theme.h"
#include "gui/views/views.h"

namespace dsgd::gui {
namespace {

constexpr Rgba kCurveColours[] = {rgba(120, 120, 120), rgba(60, 180, 75), rgba(160, 90, 230),
                                  rgba(0, 170, 200), rgba(255, 140, 0)};

Rgba curve_colour(size_t index, size_t count) {
  if (index + 1 == count) return kCurveColours[4];  // the current run
  return kCurveColours[index % 4];
}

Rgba chunk_colour(int chunk, int chunks, float intensity) {
  // Hues around the wheel, darker while few contributions have arrived.
  const float h = chunks > 0 ? static_cast<float>(chunk) / chunks : 0;
  float r, g, b;
  ImGui::ColorConvertHSVtoRGB(h, 0.75f, 0.35f + 0.65f * intensity, r, g, b);
  return rgba(static_cast<int>(r * 255), static_cast<int>(g * 255), static_cast<int>(b * 255));
}

}  // namespace

namespace {

// The toggles and one legend line per run (the current one last).
void convergence_header(const Snapshot& s, Commands& commands) {
  ViewSettings v = s.view;
  bool changed = ImGui::Checkbox(tr("log scale"), &v.log_loss);
  ImGui::SameLine();
  changed |= ImGui::Checkbox(tr("vs model time"), &v.loss_vs_time);
  if (changed) commands.push(Command{.kind = CommandKind::set_view, .view = v});
  for (size_t ci = 0; ci < s.curves.size(); ++ci) {
    const Curve& c = s.curves[ci];
    std::string label = c.label;
    if (!c.points.empty()) {
      label += fmt::format("   loss {:.3f}", c.points.back().loss);
      for (auto it = c.points.rbegin(); it != c.points.rend(); ++it)
        if (it->test_accuracy >= 0) {
          label += fmt::format("   test accuracy {:.1f}%", 100 * it->test_accuracy);
          break;
        }
    }
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(curve_colour(ci, s.curves.size())), "%s",
                       label.c_str());
  }
}

// The plot's box and scales: x is the step or model time, y the loss (left axis) and the
// accuracy 0..1 (right axis).
struct Plot {
  const Snapshot& s;
  Palette pal;
  float scale;
  ImDrawList* dl;
  ImVec2 top, p0, p1;
  PlotScale sx, sy;

  double x_of(const CurvePoint& p) const {
    return s.view.loss_vs_time ? p.model_s : static_cast<double>(p.step);
  }
  float x(double v) const { return p0.x + static_cast<float>(sx.to_unit(v)) * (p1.x - p0.x); }
  float y(double loss) const { return p1.y - static_cast<float>(sy.to_unit(loss)) * (p1.y - p0.y); }
  float y_accuracy(double a) const { return p1.y - static_cast<float>(a) * (p1.y - p0.y); }
};

void draw_grid(const Plot& p) {
  const float h = p.p1.y - p.p0.y;
  for (int i = 0; i <= 4; ++i) {
    const float gy = p.p0.y + h * i / 4;
    p.dl->AddLine({p.p0.x, gy}, {p.p1.x, gy}, p.pal.grid);
    const PlotScale& sy = p.sy;
    const double value =
        sy.log ? std::pow(10.0, std::log10(sy.hi) - (std::log10(sy.hi) - std::log10(sy.lo)) * i / 4)
               : sy.hi - (sy.hi - sy.lo) * i / 4;
    p.dl->AddText({p.top.x + 4, gy - 7 * p.scale}, p.pal.dim_text,
                  fmt::format("{:.3g}", value).c_str());
    p.dl->AddText({p.p1.x + 4, gy - 7 * p.scale}, p.pal.dim_text,
                  fmt::format("{:.0f}%", 100.0 - 25.0 * i).c_str());
  }
  p.dl->AddRect(p.p0, p.p1, p.pal.grid);
  const std::string xlabel = p.s.view.loss_vs_time
                                 ? fmt::format("model time, 0 .. {}", format_seconds(p.sx.hi))
                                 : fmt::format("step, 0 .. {:.0f}", p.sx.hi);
  p.dl->AddText({p.p0.x + 4, p.p1.y + 3}, p.pal.dim_text, xlabel.c_str());
}

// Loss solid, test accuracy as dots against the right axis (the current run's training
// accuracy as small dots).
void draw_curve(const Plot& p, size_t ci) {
  const Curve& c = p.s.curves[ci];
  const bool current = ci + 1 == p.s.curves.size();
  const Rgba colour = curve_colour(ci, p.s.curves.size());
  std::vector<ImVec2> line;
  line.reserve(c.points.size());
  for (const CurvePoint& point : c.points)
    line.push_back({p.x(p.x_of(point)), p.y(point.loss)});
  if (line.size() >= 2)
    p.dl->AddPolyline(line.data(), static_cast<int>(line.size()), colour, 0,
                      (current ? 2.5f : 1.5f) * p.scale);
  for (const CurvePoint& point : c.points) {
    if (point.test_accuracy >= 0)
      p.dl->AddCircleFilled({p.x(p.x_of(point)), p.y_accuracy(point.test_accuracy)}, 3 * p.scale,
                            colour);
    else if (point.train_accuracy >= 0 && current)
      p.dl->AddCircleFilled({p.x(p.x_of(point)), p.y_accuracy(point.train_accuracy)},
                            1.2f * p.scale, p.pal.dim_text);
  }
}

// Replay: the time cursor on the current curve, at the last step finished by then, with its
// loss (replay_marks.h).
void draw_replay_cursor(const Plot& p) {
  if (p.s.controls.live || p.s.curves.empty()) return;
  const Curve& c = p.s.curves.back();
  const std::optional<size_t> at = curve_point_at(c, step_at_cursor(p.s));
  if (!at) return;
  const CurvePoint& point = c.points[*at];
  const float x = p.x(p.x_of(point)), y = p.y(point.loss);
  p.dl->AddLine({x, p.p0.y}, {x, p.p1.y}, p.pal.cursor, 2 * p.scale);
  p.dl->AddCircleFilled({x, y}, 5 * p.scale, p.pal.cursor);
  const std::string label =
      fmt::format("{} {}: {} {:.3f}", tr("step"), point.step, tr("loss"), point.loss);
  const float w = ImGui::CalcTextSize(label.c_str()).x;
  p.dl->AddText({x + 6 + w < p.p1.x ? x + 6 : x - 6 - w, p.p0.y + 2}, p.pal.cursor, label.c_str());
}

}  // namespace

void draw_convergence(const Snapshot& s, Commands& commands) {
  convergence_header(s, commands);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 top = ImGui::GetCursorScreenPos();
  if (avail.x < 40 || avail.y < 40) return;
  Plot p{.s = s,
         .pal = palette_for(s.view.theme),
         .scale = s.view.ui_scale,
         .dl = ImGui::GetWindowDrawList(),
         .top = top};
  p.p0 = {top.x + 56 * p.scale, top.y + 8 * p.scale};
  p.p1 = {top.x + avail.x - 44 * p.scale, top.y + avail.y - 22 * p.scale};
  if (p.p1.x - p.p0.x < 10 || p.p1.y - p.p0.y < 10) return;
  std::vector<double> xs, losses;
  for (const Curve& c : s.curves)
    for (const CurvePoint& point : c.points) {
      xs.push_back(p.x_of(point));
      losses.push_back(point.loss);
    }
  if (losses.empty()) {
    p.dl->AddText({p.p0.x + 8, p.p0.y + 8}, p.pal.dim_text,
                  s.controls.live ? "waiting for the first training step..."
                                  : "no loss curve (replay a trace with --metrics FILE)");
    ImGui::Dummy(avail);
    return;
  }
  p.sx = fit_scale(xs, false);
  p.sx.lo = std::min(p.sx.lo, 0.0);
  p.sy = fit_scale(losses, s.view.log_loss);
  draw_grid(p);
  for (size_t ci = 0; ci < s.curves.size(); ++ci)
    draw_curve(p, ci);
  draw_replay_cursor(p);
  ImGui::Dummy(avail);
}

namespace {

// Training: how many ranks hold the full sum, and why a sum is the average.
void training_caption(const Snapshot& s) {
  const GradientView& g = s.gradients;
  int complete = 0;
  for (int r = 0; r < s.world; ++r)
    complete += std::count(g.contributions[r].begin(), g.contributions[r].end(), s.world) ==
                static_cast<long>(g.chunks);
  const std::string caption =
      g.ring ? fmt::format(
                   "{}: chunk colours, brightness = ranks summed; {} of {} ranks hold "
                   "the full sum",
                   g.label, complete, s.world)
             : fmt::format("{}: {} of {} ranks hold the full sum", g.label, complete, s.world);
  ImGui::TextUnformatted(caption.c_str());
  ImGui::TextDisabled("%s", tr("each rank scales its gradient by 1/B first: the sum is the mean"));
}

// Where the rows go: a label column, then the bars from x0 to x1.
struct Rows {
  ImDrawList* dl;
  Palette pal;
  float scale;
  ImVec2 top;
  float row_h, x0, x1;
};

// Demo: one bar per element, height = its value, colour = its chunk (brighter as more ranks
// are summed in).
void demo_row(const Snapshot& s, const Rows& w, int r, float y0, float y1,
              const std::vector<std::vector<float>>& values, float max_value) {
  const GradientView& g = s.gradients;
  const float bw = (w.x1 - w.x0) / g.elements;
  const bool now = s.view.demo_values == DemoValues::now;
  // The numbers, at 0.8 of the font, in a band the tallest bar leaves free above it.
  const float number_size = ImGui::GetFontSize() * 0.8f;
  const std::string widest = fmt::format("{:g}", max_value);
  const float number_w = ImGui::GetFont()->CalcTextSizeA(number_size, FLT_MAX, 0, widest.c_str()).x;
  const bool numbers = bw > number_w + 4 && y1 - y0 > 1.6f * number_size;
  const float bar_room = y1 - y0 - 2 - (numbers ? number_size : 0);
  for (int i = 0; i < g.elements; ++i) {
    const int c = g.element_chunk[i];
    const float k = now ? static_cast<float>(g.contributions[r][c]) / s.world : 1.0f;
    const float hgt = max_value > 0 ? bar_room * std::abs(values[r][i]) / max_value : 0;
    const float a = w.x0 + i * bw + 1, b = w.x0 + (i + 1) * bw - 1;
    w.dl->AddRectFilled({a, y1 - hgt}, {b, y1}, chunk_colour(c, g.chunks, k));
    if (numbers)
      w.dl->AddText(ImGui::GetFont(), number_size, {a + 2, y1 - hgt - number_size}, w.pal.text,
                    fmt::format("{:g}", values[r][i]).c_str());
  }
}

// Training: a heat strip of chunks; brighter = more ranks summed in.
void training_row(const Snapshot& s, const Rows& w, int r, float y0, float y1) {
  const GradientView& g = s.gradients;
  const float cw = (w.x1 - w.x0) / std::max(1, g.chunks);
  for (int c = 0; c < g.chunks; ++c) {
    const float k = static_cast<float>(g.contributions[r][c]) / s.world;
    w.dl->AddRectFilled({w.x0 + c * cw + 1, y0 + 2}, {w.x0 + (c + 1) * cw - 1, y1},
                        chunk_colour(c, g.chunks, k));
    if (cw > 30 * w.scale && w.row_h > 18 * w.scale)
      w.dl->AddText({w.x0 + c * cw + 4, y0 + 3}, rgba(255, 255, 255),
                    fmt::format("{}/{}", g.contributions[r][c], s.world).c_str());
  }
}

}  // namespace

void draw_gradients(const Snapshot& s, Commands& commands) {
  const GradientView& g = s.gradients;
  if (s.world == 0) {
    ImGui::TextUnformatted("No ranks yet.");
    return;
  }
  const bool demo = g.elements > 0 && static_cast<int>(g.values.size()) == s.world;
  std::vector<std::vector<float>> values;
  if (demo)
    values = demo_header(s, commands);
  else
    training_caption(s);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  if (avail.x < 40 || avail.y < 20) return;
  const float scale = s.view.ui_scale;
  const ImVec2 top = ImGui::GetCursorScreenPos();
  const Rows w{.dl = ImGui::GetWindowDrawList(),
               .pal = palette_for(s.view.theme),
               .scale = scale,
               .top = top,
               .row_h = avail.y / s.world,
               .x0 = top.x + 60 * scale,
               .x1 = top.x + avail.x - 8};
  float max_value = 0;
  for (int r = 0; demo && r < s.world; ++r)
    for (int i = 0; i < g.elements; ++i)
      max_value = std::max(max_value, std::abs(values[r][i]));
  for (int r = 0; r < s.world; ++r) {
    const float y0 = top.y + r * w.row_h, y1 = y0 + w.row_h - 3;
    if (w.row_h >= 10 * scale)
      w.dl->AddText({top.x + 4, y0 + (w.row_h - 14 * scale) / 2}, w.pal.text,
                    fmt::format("{} {}", tr("rank"), r).c_str());
    if (demo)
      demo_row(s, w, r, y0, y1, values, max_value);
    else
      training_row(s, w, r, y0, y1);
  }
  ImGui::Dummy(avail);
}

}  // namespace dsgd::gui
