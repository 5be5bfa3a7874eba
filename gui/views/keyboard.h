// Reads this frame's presenter keys from ImGui (model/shortcuts.h says what they do): none
// while a text field has the keyboard, so typing a value never steps the run.
#pragma once

#include "gui/model/shortcuts.h"

namespace dsgd::gui {

KeyPresses read_key_presses();

}  // namespace dsgd::gui
