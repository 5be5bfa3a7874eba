// The run's progress as the controls' bar shows it, in the ranks' own terms: a rank's label
// says "step 87" for the step it has begun (RankView::step, from the events), while the
// session counts the steps completed (ControlState::step); the bar names both, "step 87 /
// 300 (86 done)", so the two never seem to disagree. Not the bar itself (view_controls.cpp).
#pragma once

#include <string>

#include "gui/model/snapshot.h"

namespace dsgd::gui {

// "step 87 / 300 (86 done)" while step 87 runs; "300 / 300 steps done" between steps and at
// the end; "12 / 20 rounds done" in the all_reduce demo. In the window's language (tr()).
std::string progress_label(const Snapshot& snapshot);

}  // namespace dsgd::gui
