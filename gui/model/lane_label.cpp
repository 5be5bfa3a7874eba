#include "gui/model/lane_label.h"

#include <fmt/format.h>

#include "core/io/trace_summary.h"
#include "gui/model/ui_text.h"

namespace dsgd::gui {

std::string lane_label(const TraceSummary& summary, int lane) {
  if (summary.ranks == 0) return fmt::format(fmt::runtime(tr("rank {}")), lane);
  const int first = summary_group_first(lane, summary.ranks, summary.groups);
  const int size = summary_group_size(lane, summary.ranks, summary.groups);
  if (size == 1) return fmt::format(fmt::runtime(tr("rank {}")), first);
  return fmt::format(fmt::runtime(tr("ranks {}-{}")), first, first + size - 1);
}

}  // namespace dsgd::gui
