#include "gui/model/time_window.h"

#include <algorithm>

namespace dsgd::gui {

TimeWindow time_window(const TimeWindowInputs& in) {
  constexpr double kMinSpanS = 1e-9;
  const double last = in.live ? in.now_s : in.end_s;
  if (in.span_s <= 0) return {in.begin_s, std::max(last, in.begin_s + kMinSpanS)};
  const double span = std::max(in.span_s, kMinSpanS);
  if (in.end_at_s > 0) return {in.end_at_s - span, in.end_at_s};
  // Following: a live run's newest moment at the right edge; a replay's cursor in the middle.
  const double t1 = in.live ? in.now_s : in.now_s + span / 2;
  const double right = std::max(t1, in.begin_s + span);
  return {right - span, right};
}

}  // namespace dsgd::gui
