// R = world, D = levels of the binomial tree, P = the largest power of two <= R.
#include "gui/model/message_text.h"

#include <fmt/format.h>

#include "core/comm/collective_tags.h"
#include "core/comm/halving_doubling_schedule.h"
#include "gui/model/ui_text.h"

namespace dsgd::gui {
namespace {

bool halving_doubling(const MessageView& m) {
  const CollectiveTag* c = find_collective_tag(m.tag);
  return c && c->op == CollectiveOp::all_reduce && c->algorithm == Algorithm::halving_doubling;
}

// The first step of m's phase and how many steps the phase has, counted in the collective's
// steps (message_phase.h numbers them over all phases).
std::pair<int, int> phase_span(const CollectiveTag& c, const MessageView& m, int world) {
  if (c.op != CollectiveOp::all_reduce) return {0, m.steps};
  switch (c.algorithm) {
    case Algorithm::ring:
      return {m.phase == Phase::all_gather ? world - 1 : 0, world - 1};
    case Algorithm::tree:
      return {m.phase == Phase::broadcast ? m.steps / 2 : 0, m.steps / 2};
    case Algorithm::halving_doubling: {
      if (m.phase == Phase::fold || m.phase == Phase::unfold) return {m.step, 1};
      const HalvingDoubling h = HalvingDoubling::of(world);
      return {h.exchange_step(m.phase == Phase::all_gather ? h.levels : 0), h.levels};
    }
    default:
      return {m.step, 1};  // naive: one step each way
  }
}

}  // namespace

PhasePosition phase_position(const MessageView& m, int world) {
  PhasePosition p{.phase = m.phase};
  const CollectiveTag* c = find_collective_tag(m.tag);
  if (!c || m.step < 0 || m.steps <= 0 || world < 2) return p;
  const auto [first, count] = phase_span(*c, m, world);
  if (count <= 0 || m.step < first || m.step >= first + count) return p;
  p.index = m.step - first + 1;
  p.count = count;
  return p;
}

std::string phase_text(const MessageView& m, int world) {
  if (m.phase == Phase::p2p) return "";
  const PhasePosition p = phase_position(m, world);
  const bool hd = halving_doubling(m);
  const char* name = tr(to_string(m.phase));
  if (m.phase == Phase::reduce_scatter && hd) name = tr("halving (reduce-scatter)");
  if (m.phase == Phase::all_gather && hd) name = tr("doubling (all-gather)");
  if (m.phase == Phase::reduce) name = tr("reduce up, level");
  if (m.phase == Phase::broadcast && m.segments <= 0) name = tr("broadcast down, level");
  if (p.count <= 1) return name;
  return fmt::format("{} {}/{}", name, p.index, p.count);
}

std::string phase_and_chunk_text(const MessageView& m, int world) {
  std::string text = phase_text(m, world);
  if (m.chunk >= 0) text += fmt::format(", {} {}", tr("chunk"), m.chunk);
  if (m.segments > 1) text += fmt::format(", {} {}/{}", tr("part"), m.segment + 1, m.segments);
  return text;
}

const char* phase_hint(const MessageView& m) {
  const bool hd = halving_doubling(m);
  switch (m.phase) {
    case Phase::reduce_scatter:
      return hd ? tr("partners swap halves and add: each keeps half")
                : tr("each rank adds the chunk it receives to its own");
    case Phase::all_gather:
      return hd ? tr("partners swap their finished halves")
                : tr("each rank copies the finished chunk it receives");
    case Phase::fold:
      return tr("an extra rank hands its values to its partner");
    case Phase::unfold:
      return tr("the partner hands the result back");
    case Phase::reduce:
      return tr("each parent adds its children's values, up to the root");
    case Phase::broadcast:
      return tr("the root's values go down to every rank");
    case Phase::to_root:
      return tr("every rank sends its values to the root, which adds them");
    case Phase::from_root:
      return tr("the root sends the result to every rank");
    case Phase::round:
      return tr("a barrier round");
    case Phase::p2p:
    case Phase::unknown:
      break;
  }
  return "";
}

std::string tag_column_text(const MessageView& m) {
  if (find_collective_tag(m.tag)) return m.op;
  return fmt::format("{} {}", tr("tag"), m.tag);
}

std::string preview_text(const MessageView& m) {
  std::string text;
  for (int i = 0; i < m.preview_count && i < 4; ++i)
    text += fmt::format("{}{:g}", i ? ", " : "", m.preview[i]);
  if (m.preview_count > 0 && m.bytes > m.preview_count * sizeof(float)) text += ", ...";
  return text;
}

}  // namespace dsgd::gui
