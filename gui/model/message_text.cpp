#include "gui/model/message_text.h"

#include <fmt/format.h>

#include "core/comm/collective_tags.h"
#include "gui/model/ui_text.h"

namespace dsgd::gui {
namespace {

bool halving_doubling(const MessageView& m) {
  const CollectiveTag* c = find_collective_tag(m.tag);
  return c && c->op == CollectiveOp::all_reduce && c->algorithm == Algorithm::halving_doubling;
}

}  // namespace

PhasePosition phase_position(const MessageView& m) {
  PhasePosition p{.phase = m.phase};
  if (m.phase_step < 0 || m.phase_steps <= 0) return p;  // the fold's count (message_phase.h)
  p.index = m.phase_step + 1;
  p.count = m.phase_steps;
  return p;
}

std::string phase_text(const MessageView& m, int world) {
  if (m.phase == Phase::p2p) return "";
  const PhasePosition p = phase_position(m);
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
    case Phase::exchange:
      return tr("partners swap their whole buffers and add");
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

std::string delivery_note(int retransmits, bool lost) {
  if (lost) return tr("lost");
  if (retransmits == 1) return tr("resent");
  if (retransmits > 1) return fmt::format(fmt::runtime(tr("resent {}x")), retransmits);
  return "";
}

std::string took_text(const MessageView& m) {
  if (m.lost) return tr("lost");
  const std::string note = delivery_note(m.retransmits, false);
  const std::string took = m.arrived ? format_seconds(m.arrive_s - m.send_s) : tr("in flight");
  return note.empty() ? took : took + ", " + note;
}

std::string preview_text(const MessageView& m) {
  std::string text;
  for (int i = 0; i < m.preview_count && i < 4; ++i)
    text += fmt::format("{}{:g}", i ? ", " : "", m.preview[i]);
  if (m.preview_count > 0 && m.bytes > m.preview_count * sizeof(float)) text += ", ...";
  return text;
}

}  // namespace dsgd::gui
