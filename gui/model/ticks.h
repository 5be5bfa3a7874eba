// Axis ticks for the plots and the timeline: values at 1, 2 or 5 times a power of ten (on a
// log axis: decades, or 1-2-5 within them), and labels with just enough digits that two
// neighbouring ticks never read the same ("403.001 ms", "403.002 ms"). No drawing: the
// views place the ticks and measure the labels.
#pragma once

#include <string>
#include <vector>

namespace dsgd::gui {

// How a tick's value reads: a number ("0.25"), a fraction as a percentage ("40%"), or a
// time in seconds in the unit that suits the axis ("400 ms").
enum class TickFormat { number, percent, seconds };

struct Tick {
  double value = 0;
  std::string label;
};

// An axis over [lo, hi] (widened to the ticks at either end when `widen`) and its ticks.
struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  std::vector<Tick> ticks;
  // Where v falls, 0 at lo and 1 at hi, linearly or by log10 (v <= lo on a log axis: 0).
  double to_unit(double v) const;
};

// The smallest step 1, 2 or 5 x 10^k with at most `max_ticks` intervals over `span` (> 0).
double nice_step(double span, int max_ticks);

// Ticks at multiples of a nice step over [lo, hi]: at most max_ticks + 1 of them, unless
// fewer than two would fall inside, when the step is the largest that gives two or more;
// `widen` moves lo and hi out to the nearest multiples (then there are always two). A
// log axis (lo > 0) takes decades, or 1-2-5 or 1..9 times them when fewer than three
// decades fall inside; with none of those it is ticked linearly.
Axis nice_axis(double lo, double hi, int max_ticks, bool log, TickFormat format, bool widen);

// Labels for tick values in ascending order: the digits the smallest gap between two of them
// needs, the same for all (seconds: one unit for all, chosen by the largest magnitude).
std::vector<std::string> tick_labels(const std::vector<double>& values, TickFormat format);

}  // namespace dsgd::gui
