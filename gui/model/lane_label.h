// What the views call one of a snapshot's lanes (a row of the timeline, a disc of the
// topology): "rank 3", or in a summarised trace (core/io/trace_summary.h) the group of
// ranks it stands for, "ranks 32-63", in the window's language.
#pragma once

#include <string>

#include "core/io/trace.h"

namespace dsgd::gui {

std::string lane_label(const TraceSummary& summary, int lane);

}  // namespace dsgd::gui
