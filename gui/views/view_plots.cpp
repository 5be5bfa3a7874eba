// The convergence view (loss and accuracy against step or model time, log toggle, earlier
// runs overlaid) and the gradient averaging view (each rank's tensor as bars, coloured by
// ring chunk, brightening as contributions accumulate; one colour for the other
// algorithms, whose buffer is shown whole). Plots are drawn with the draw list:
// ImPlot is not in Debian.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <imgui.h>

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
  ImGui::Dummy(avail);
}

namespace {

// "2 of 4 ranks hold the full sum  |  all_reduce ring: chunk colours, brightness = ranks
// summed"; once ranks crashed "0 of 3 alive ranks hold the full sum (1 crashed)  |  ...".
// The count first: where the caption is cut, it is what stays.
std::string gradient_caption(const Snapshot& s) {
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
  return out;
}

}  // namespace

void draw_gradients(const Snapshot& s, Commands& commands) {
  const Palette pal = palette_for(s.view.theme);
  const float scale = s.view.ui_scale;
  const GradientView& g = s.gradients;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 top = ImGui::GetCursorScreenPos();
  if (avail.x < 40 || avail.y < 40 || s.world == 0) {
    ImGui::TextUnformatted("No ranks yet.");
    return;
  }
  const float caption_h = 20 * scale;
  const float label_w = 60 * scale;
  const float row_h = (avail.y - caption_h) / s.world;
  const float x0 = top.x + label_w, x1 = top.x + avail.x - 8;
  const float width = x1 - x0;

  dl->AddText({top.x + 4, top.y + 2}, pal.text, gradient_caption(s).c_str());

  float max_value = 0;
  for (const auto& row : g.values)
    for (float v : row)
      max_value = std::max(max_value, std::abs(v));
  for (int r = 0; r < s.world; ++r) {
    const float y0 = top.y + caption_h + r * row_h, y1 = y0 + row_h - 3;
    if (row_h >= 10 * scale)
      dl->AddText({top.x + 4, y0 + (row_h - 14 * scale) / 2}, pal.text,
                  fmt::format("{} {}", tr("rank"), r).c_str());
    if (s.ranks[r].crashed) {  // what it held is lost with it: a grey row that says so
      dl->AddRectFilled({x0 + 1, y0 + 2}, {x1 - 1, y1}, pal.node_crashed);
      dl->AddText({x0 + 6, y0 + (row_h - ImGui::GetFontSize()) / 2}, rgba(255, 255, 255),
                  tr("crashed"));
    } else if (g.elements > 0 && r < static_cast<int>(g.values.size())) {
      // Demo: one bar per element, height = its value, colour = its chunk.
      const float bw = width / g.elements;
      for (int i = 0; i < g.elements; ++i) {
        const int c = g.element_chunk[i];
        const float k = static_cast<float>(g.contributions[r][c]) / s.world;
        const float hgt = max_value > 0 ? (y1 - y0 - 2) * std::abs(g.values[r][i]) / max_value : 0;
        dl->AddRectFilled({x0 + i * bw + 1, y1 - hgt}, {x0 + (i + 1) * bw - 1, y1},
                          chunk_colour(c, g.chunks, k));
        if (bw > 22 * scale && row_h > 30 * scale)
          dl->AddText({x0 + i * bw + 3, y1 - hgt - 14 * scale}, pal.text,
                      fmt::format("{:.0f}", g.values[r][i]).c_str());
      }
    } else {
      // Training: a heat strip of chunks; brighter = more ranks summed in.
      const float cw = width / std::max(1, g.chunks);
      for (int c = 0; c < g.chunks; ++c) {
        const float k = static_cast<float>(g.contributions[r][c]) / s.world;
        dl->AddRectFilled({x0 + c * cw + 1, y0 + 2}, {x0 + (c + 1) * cw - 1, y1},
                          chunk_colour(c, g.chunks, k));
        if (cw > 30 * scale && row_h > 18 * scale)
          dl->AddText({x0 + c * cw + 4, y0 + 3}, rgba(255, 255, 255),
                      fmt::format("{}/{}", g.contributions[r][c], s.world).c_str());
      }
    }
  }
  ImGui::Dummy(avail);
}

}  // namespace dsgd::gui
