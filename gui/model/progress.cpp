#include "gui/model/progress.h"

#include <algorithm>

#include <fmt/format.h>

#include "gui/model/ui_text.h"

namespace dsgd::gui {

std::string progress_label(const Snapshot& s) {
  const ControlState& c = s.controls;
  if (c.settings.mode != RunMode::train)
    return fmt::format(fmt::runtime(tr("{} / {} rounds done")), c.step, c.total_steps);
  int64_t begun = 0;
  for (const RankView& r : s.ranks)
    begun = std::max(begun, r.step);
  if (begun > c.step)
    return fmt::format(fmt::runtime(tr("step {} / {} ({} done)")), begun, c.total_steps, c.step);
  return fmt::format(fmt::runtime(tr("{} / {} steps done")), c.step, c.total_steps);
}

}  // namespace dsgd::gui
