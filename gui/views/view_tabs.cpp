// The dashboard's bottom window holds three views as tabs: the timeline, the message log and
// where the time goes. The chosen tab is a view setting (ViewSettings::bottom, --tab), so a
// headless screenshot can show any of them; ImGui is told it every frame, and a click on
// another tab asks for it with a command.
#include <string>

#include <imgui.h>

#include "gui/views/theme.h"
#include "gui/views/views.h"

namespace dsgd::gui {

std::string bottom_window_title(const Snapshot& s) {
  const std::string title = view_title(s.view.bottom, s.view.chinese);
  return title.substr(0, title.find("###")) + "###timeline";
}

void draw_bottom_tabs(const Snapshot& s, Commands& commands, ViewState& state) {
  const View tabs[] = {View::timeline, View::messages, View::time};
  const View chosen = s.view.bottom;
  if (!ImGui::BeginTabBar("bottom_tabs")) return;
  for (View tab : tabs) {
    const ImGuiTabItemFlags flags = tab == chosen ? ImGuiTabItemFlags_SetSelected : 0;
    const bool open = ImGui::BeginTabItem(view_title(tab, s.view.chinese), nullptr, flags);
    if (ImGui::IsItemClicked() && tab != chosen) {
      ViewSettings v = s.view;
      v.bottom = tab;
      commands.push(Command{.kind = CommandKind::set_view, .view = v});
    }
    if (!open) continue;
    if (tab == chosen) draw_view(tab, s, commands, state);
    ImGui::EndTabItem();
  }
  ImGui::EndTabBar();
}

}  // namespace dsgd::gui
