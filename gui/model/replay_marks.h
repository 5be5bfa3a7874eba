// What a teacher marks in a replay: bookmarks (times to jump back to, B adds one at the time
// cursor) and where the time cursor falls on a loss curve (the convergence plot's cursor).
// Plain functions over ViewSettings and the snapshot; the views draw them, the keys
// (shortcuts.h) and buttons push the commands. Not the replay itself (trace_replay.h).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "gui/model/commands.h"
#include "gui/model/snapshot.h"

namespace dsgd::gui {

// The view settings with a bookmark at `t_s`, kept sorted; a time already marked (within
// a millionth of the trace's span) is not marked twice.
Command add_bookmark(const Snapshot& s, double t_s);
Command remove_bookmark(const Snapshot& s, size_t index);
// The first bookmark after the cursor, wrapping to the first (nullopt: none).
std::optional<double> next_bookmark(const Snapshot& s);

// The training step the time cursor has reached: the highest step a rank ended by now_s
// (its loss is known from then on); 0 before the first.
int64_t step_at_cursor(const Snapshot& s);
// The index of the last point of `curve` at or before `step` (nullopt: none).
std::optional<size_t> curve_point_at(const Curve& curve, int64_t step);

}  // namespace dsgd::gui
