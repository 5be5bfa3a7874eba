#include "gui/views/keyboard.h"

#include <imgui.h>

namespace dsgd::gui {

KeyPresses read_key_presses() {
  const ImGuiIO& io = ImGui::GetIO();
  KeyPresses keys;
  if (io.WantTextInput) return keys;
  const auto pressed = [](ImGuiKey key) { return ImGui::IsKeyPressed(ImGui::GetKeyIndex(key)); };
  keys.space = pressed(ImGuiKey_Space);
  keys.right = pressed(ImGuiKey_RightArrow);
  keys.page_down = pressed(ImGuiKey_PageDown);
  keys.escape = pressed(ImGuiKey_Escape);
  keys.shift = io.KeyShift;
  for (const ImWchar c : io.InputQueueCharacters) {
    keys.plus |= c == '+' || c == '=';
    keys.minus |= c == '-';
    keys.f |= c == 'f' || c == 'F';
    keys.b |= c == 'b' || c == 'B';
  }
  return keys;
}

}  // namespace dsgd::gui
