#include "cli/compare_plot.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/smoothing.h"

#ifdef DSGD_HAVE_PLPLOT
#include <plplot/plstream.h>
#endif

namespace dsgd::cli {

#ifndef DSGD_HAVE_PLPLOT

bool can_plot() {
  return false;
}

void write_plot(const std::string& path, const std::vector<Curve>&, const std::string&) {
  throw UsageError(fmt::format("--plot {}: this dsgd was built without PLplot", path));
}

#else

namespace {

// Colour map 0: the background, the ink, then the Okabe-Ito colours (told apart by people
// with any colour vision), darkest first so the first runs read best on a projector.
constexpr PLINT kRed[] = {255, 0, 0, 213, 0, 230, 204, 86, 120, 153};
constexpr PLINT kGreen[] = {255, 0, 114, 94, 158, 159, 121, 180, 120, 153};
constexpr PLINT kBlue[] = {255, 0, 178, 0, 115, 0, 167, 233, 120, 51};
constexpr int kInk = 1, kFirstRunColour = 2, kRunColours = 8;

int colour_of(size_t run) {
  return kFirstRunColour + static_cast<int>(run % kRunColours);
}
int style_of(size_t run) {
  return 1 + static_cast<int>(run / kRunColours % 8);
}

struct Panel {
  double left, right, bottom, top;  // its viewport, in fractions of the page
  const char* x_label;
  const char* y_label;
  const char* title;
  bool smooth;  // the loss: a moving average, on a log scale where it spans decades
  std::vector<double> Curve::*x;
  std::vector<double> Curve::*y;
};

std::pair<double, double> range_of(const std::vector<Curve>& curves, std::vector<double> Curve::*v,
                                   bool log) {
  double lo = INFINITY, hi = -INFINITY;
  for (const Curve& c : curves)
    for (double x : c.*v) {
      if (log && !(x > 0)) continue;
      const double y = log ? std::log10(x) : x;
      lo = std::min(lo, y), hi = std::max(hi, y);
    }
  if (!(lo <= hi)) return {0, 1};
  if (hi - lo < 1e-12) return {lo - 0.5, hi + 0.5};
  const double pad = log ? 0.05 * (hi - lo) : 0.03 * (hi - lo);
  return {lo - pad, hi + pad};
}

// A log scale where the values span more than a decade (its labels are powers of ten).
bool spans_decades(const std::vector<Curve>& curves, std::vector<double> Curve::*v) {
  const auto [lo, hi] = range_of(curves, v, true);
  return hi - lo > 1.2;
}

void draw_panel(plstream& pls, const Panel& p, const std::vector<Curve>& curves) {
  std::vector<Curve> shown = curves;
  if (p.smooth)
    for (Curve& c : shown)
      c.*p.y = smoothed(c.*p.y);
  const bool log_y = p.smooth && spans_decades(shown, p.y);
  pls.vpor(p.left, p.right, p.bottom, p.top);
  const auto [x0, x1] = range_of(shown, p.x, false);
  const auto [y0, y1] = range_of(shown, p.y, log_y);
  pls.wind(std::max(0.0, x0), x1, y0, y1);
  pls.col0(kInk);
  pls.width(1);
  pls.box("bcnst", 0, 0, log_y ? "bcnstvl" : "bcnstv", 0, 0);
  pls.lab(p.x_label, p.y_label, p.title);
  pls.width(2.5);
  for (size_t i = 0; i < shown.size(); ++i) {
    const std::vector<double>& xs = shown[i].*p.x;
    std::vector<double> ys = shown[i].*p.y;
    if (log_y)
      for (double& y : ys)
        y = std::log10(std::max(y, 1e-30));
    pls.col0(colour_of(i));
    pls.lsty(style_of(i));
    pls.line(static_cast<PLINT>(xs.size()), xs.data(), ys.data());
  }
  pls.lsty(1);
}

// Under the title, across the page (four runs a row, two when a label is long), where it
// covers no curve.
void draw_legend(plstream& pls, const std::vector<Curve>& curves) {
  const size_t n = curves.size();
  std::vector<PLINT> opts(n, PL_LEGEND_LINE), colours(n), styles(n), none(n, 0);
  std::vector<PLFLT> widths(n, 2.5), scales(n, 1.0);
  std::vector<const char*> text, symbols(n, "");
  for (size_t i = 0; i < n; ++i) {
    colours[i] = colour_of(i), styles[i] = style_of(i);
    text.push_back(curves[i].label.c_str());
  }
  PLFLT w = 0, h = 0;
  size_t longest = 0;
  for (const Curve& c : curves)
    longest = std::max(longest, c.label.size());
  const size_t per_row = std::min<size_t>(n, longest > 24 ? 2 : 4);
  const auto columns = static_cast<PLINT>(per_row);
  const auto rows = static_cast<PLINT>((n + per_row - 1) / per_row);
  pls.vpor(0.07, 0.95, 0.80, 0.925);
  pls.wind(0, 1, 0, 1);
  pls.legend(&w, &h, 0, PL_POSITION_TOP | PL_POSITION_INSIDE, 0, 0, 0.04, 0, kInk, 1, rows, columns,
             static_cast<PLINT>(n), opts.data(), 0.8, 0.6, 1.6, 0.0, colours.data(), text.data(),
             nullptr, nullptr, nullptr, nullptr, colours.data(), styles.data(), widths.data(),
             none.data(), scales.data(), none.data(), symbols.data());
}

}  // namespace

bool can_plot() {
  return true;
}

void write_plot(const std::string& path, const std::vector<Curve>& curves,
                const std::string& title) {
  plstream pls;
  pls.sdev(path.ends_with(".svg") ? "svgcairo" : "pngcairo");
  pls.sfnam(path.c_str());
  pls.spage(0, 0, 1600, 1000, 0, 0);
  pls.scmap0(kRed, kGreen, kBlue, std::size(kRed));
  pls.init();
  pls.adv(0);
  pls.schr(0, 0.62);
  // Two columns (steps, model time), two rows (loss, accuracy), the title above.
  constexpr double kLeft[] = {0.07, 0.56}, kRight[] = {0.46, 0.95};
  constexpr double kBottom[] = {0.49, 0.07}, kTop[] = {0.76, 0.34};
  const Panel panels[] = {
      {kLeft[0], kRight[0], kBottom[0], kTop[0], "step", "training loss (moving average)",
       "Loss by step", true, &Curve::step, &Curve::loss},
      {kLeft[1], kRight[1], kBottom[0], kTop[0], "model time (s)", "training loss (moving average)",
       "Loss by model time", true, &Curve::model_s, &Curve::loss},
      {kLeft[0], kRight[0], kBottom[1], kTop[1], "step", "test accuracy (%)", "Accuracy by step",
       false, &Curve::eval_step, &Curve::accuracy},
      {kLeft[1], kRight[1], kBottom[1], kTop[1], "model time (s)", "test accuracy (%)",
       "Accuracy by model time", false, &Curve::eval_model_s, &Curve::accuracy},
  };
  for (const Panel& p : panels)
    draw_panel(pls, p, curves);
  draw_legend(pls, curves);
  pls.vpor(0, 1, 0.93, 1);
  pls.wind(0, 1, 0, 1);
  pls.col0(kInk);
  pls.schr(0, 0.8);
  pls.mtex("t", -1.6, 0.5, 0.5, title.c_str());
}

#endif

}  // namespace dsgd::cli
