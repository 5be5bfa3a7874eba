// The all_reduce demo's header, above its bars: what the all_reduce is doing now ("all_reduce
// ring: reduce-scatter 3/7 (5 messages in flight)" and what that step does), which vectors
// the bars show (now, each rank's input before, the sum after, the sum / N that AVG gives)
// and a line that says what those numbers are. The words come from allreduce_demo.h.
#include <fmt/format.h>
#include <imgui.h>

#include "gui/model/allreduce_demo.h"
#include "gui/views/legend.h"
#include "gui/views/views.h"

namespace dsgd::gui {
namespace {

// What the values shown are, in one line.
std::string values_note(const Snapshot& s) {
  switch (s.view.demo_values) {
    case DemoValues::before:
      return tr("each rank's own vector, before the all_reduce");
    case DemoValues::average:
      return fmt::format(fmt::runtime(tr("the sum divided by N = {}: what ReduceOp::AVG gives")),
                         s.world);
    case DemoValues::now:
    case DemoValues::sum:
      break;
  }
  return fmt::format(
      fmt::runtime(tr("sums (ReduceOp::SUM): AVG divides them by N = {} at the end")), s.world);
}

}  // namespace

std::vector<std::vector<float>> demo_header(const Snapshot& s, Commands& commands) {
  const DemoCaption caption = demo_caption(s);
  ImGui::TextWrapped("%s", caption.hint.empty()
                               ? caption.what.c_str()
                               : fmt::format("{}: {}", caption.what, caption.hint).c_str());
  ViewSettings v = s.view;
  int shown = static_cast<int>(v.demo_values);
  bool changed = false;
  const char* names[] = {tr("now"), tr("before"), tr("after: sum"), tr("after: sum / N")};
  for (int i = 0; i < 4; ++i) {
    if (i > 0) same_line_if_fits(check_box_width(names[i]));
    changed |= ImGui::RadioButton(names[i], &shown, i);
  }
  if (changed) {
    v.demo_values = static_cast<DemoValues>(shown);
    commands.push(Command{.kind = CommandKind::set_view, .view = v});
  }
  // The note beside the buttons when it fits, else under them.
  const std::string note = values_note(s);
  same_line_if_fits(ImGui::CalcTextSize(note.c_str()).x, ImGui::GetTextLineHeight());
  ImGui::TextWrapped("%s", note.c_str());
  return demo_values(s, s.view.demo_values);
}

}  // namespace dsgd::gui
