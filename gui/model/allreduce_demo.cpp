#include "gui/model/allreduce_demo.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/comm/collective_tags.h"
#include "gui/model/layout.h"
#include "gui/model/message_text.h"
#include "gui/model/ui_text.h"

namespace dsgd::gui {
namespace {

bool all_reduce_message(const MessageView& m) {
  const CollectiveTag* c = find_collective_tag(m.tag);
  return c && c->op == CollectiveOp::all_reduce;
}

bool every_rank_complete(const Snapshot& s) {
  for (const std::vector<int>& rank : s.gradients.contributions)
    for (int c : rank)
      if (c != s.world) return false;
  return !s.gradients.contributions.empty();
}

}  // namespace

DemoStage demo_stage(const Snapshot& s) {
  DemoStage stage;
  for (int i : s.in_flight) {
    const MessageView& m = s.messages[i];
    if (!all_reduce_message(m)) continue;
    ++stage.in_flight;
    if (stage.message < 0 || m.step < s.messages[stage.message].step) stage.message = i;
  }
  if (stage.in_flight > 0) return stage;
  for (int i = static_cast<int>(s.messages.size()) - 1; i >= 0 && stage.message < 0; --i)
    if (all_reduce_message(s.messages[i])) stage.message = i;
  stage.done = stage.message >= 0 && every_rank_complete(s);
  return stage;
}

DemoCaption demo_caption(const Snapshot& s) {
  const DemoStage stage = demo_stage(s);
  const char* label = s.gradients.label;
  if (stage.message < 0) return {fmt::format("{}: {}", label, tr("waiting for the first message"))};
  if (stage.done) return {fmt::format("{}: {}", label, tr("done, every rank holds the sum"))};
  const MessageView& m = s.messages[stage.message];
  DemoCaption caption{fmt::format("{}: {}", label, phase_text(m, s.world)), phase_hint(m)};
  if (stage.in_flight > 0)
    caption.what += fmt::format(" ({} {})", stage.in_flight, tr("in flight"));
  return caption;
}

std::vector<std::vector<float>> demo_values(const Snapshot& s, DemoValues which) {
  const GradientView& g = s.gradients;
  if (which == DemoValues::now) return g.values;
  std::vector<std::vector<float>> out(s.world, std::vector<float>(g.elements));
  for (int r = 0; r < s.world; ++r)
    for (int i = 0; i < g.elements; ++i) {
      if (which == DemoValues::before) {
        out[r][i] = demo_value(r, i);
        continue;
      }
      const float sum = demo_partial_sum(s.world, r, i, s.world);
      out[r][i] = which == DemoValues::average ? sum / static_cast<float>(s.world) : sum;
    }
  return out;
}

}  // namespace dsgd::gui
