// The timeline's visible span of time: the whole run by default, following its newest
// moment; a zoom keeps following at that width; a scroll (or a wheel zoom around the mouse)
// pins the window where the user put it until "all" or a restart. Replays show the whole
// trace and, zoomed, follow the cursor. Plain arithmetic, so tests can check it.
#pragma once

namespace dsgd::gui {

struct TimeWindow {
  double t0 = 0, t1 = 0;
};

struct TimeWindowInputs {
  double begin_s = 0;  // the run's (or trace's) first moment
  double end_s = 0;    // a replay's last event (live runs: ignored)
  double now_s = 0;    // live: the newest time; replay: the cursor
  bool live = false;
  double span_s = 0;    // the user's zoom; 0 = everything
  double end_at_s = 0;  // where the user scrolled to; 0 = follow now
};

TimeWindow time_window(const TimeWindowInputs& in);

}  // namespace dsgd::gui
