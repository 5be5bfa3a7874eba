#include "gui/model/replay_marks.h"

#include <algorithm>
#include <cmath>

namespace dsgd::gui {

Command add_bookmark(const Snapshot& s, double t_s) {
  Command c{.kind = CommandKind::set_view, .view = s.view};
  std::vector<double>& marks = c.view.bookmarks;
  const double close_s = std::max(1e-12, 1e-6 * (s.end_s - s.begin_s));
  const bool marked = std::any_of(marks.begin(), marks.end(),
                                  [&](double m) { return std::abs(m - t_s) <= close_s; });
  if (!marked) marks.insert(std::upper_bound(marks.begin(), marks.end(), t_s), t_s);
  return c;
}

Command remove_bookmark(const Snapshot& s, size_t index) {
  Command c{.kind = CommandKind::set_view, .view = s.view};
  if (index < c.view.bookmarks.size())
    c.view.bookmarks.erase(c.view.bookmarks.begin() + static_cast<std::ptrdiff_t>(index));
  return c;
}

std::optional<double> next_bookmark(const Snapshot& s) {
  const std::vector<double>& marks = s.view.bookmarks;
  if (marks.empty()) return std::nullopt;
  const double close_s = std::max(1e-12, 1e-6 * (s.end_s - s.begin_s));
  const auto it = std::upper_bound(marks.begin(), marks.end(), s.now_s + close_s);
  return it == marks.end() ? marks.front() : *it;
}

int64_t step_at_cursor(const Snapshot& s) {
  int64_t step = 0;
  for (const StepView& v : s.steps)
    if (!v.open) step = std::max(step, v.step);
  return step;
}

std::optional<size_t> curve_point_at(const Curve& curve, int64_t step) {
  const auto it = std::upper_bound(curve.points.begin(), curve.points.end(), step,
                                   [](int64_t v, const CurvePoint& p) { return v < p.step; });
  if (it == curve.points.begin()) return std::nullopt;
  return static_cast<size_t>(it - curve.points.begin() - 1);
}

}  // namespace dsgd::gui
