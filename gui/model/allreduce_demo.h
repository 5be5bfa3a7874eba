// The all_reduce demo told as a teacher would: where the latest all_reduce stands ("all_reduce
// ring: reduce-scatter 3/7, each rank adds the chunk it receives to its own, 5 messages in
// flight"), and each rank's vector before it, now, and after it: the sum every rank ends with,
// or that sum divided by N, which ReduceOp::AVG gives. Phases come from the event fold through
// the snapshot's messages. Not the demo's run (session.cpp) nor its drawing (view_plots.cpp).
#pragma once

#include <string>
#include <vector>

#include "gui/model/snapshot.h"

namespace dsgd::gui {

struct DemoStage {
  int message = -1;   // the message that says where it stands: the earliest step in flight,
                      // else the last sent; -1 before the first
  int in_flight = 0;  // all_reduce messages sent and not yet received
  bool done = false;  // nothing in flight and every rank holds the whole sum
};
DemoStage demo_stage(const Snapshot& s);

// Two lines: what is happening ("all_reduce ring: reduce-scatter 3/7 (5 messages in flight)")
// and what that step does ("each rank adds the chunk it receives to its own").
struct DemoCaption {
  std::string what, hint;
};
DemoCaption demo_caption(const Snapshot& s);

// [rank][element]: the values the demo's bars show. now: GradientView::values; before: each
// rank's input (demo_value); sum: the result every rank holds; average: sum / N.
std::vector<std::vector<float>> demo_values(const Snapshot& s, DemoValues which);

}  // namespace dsgd::gui
