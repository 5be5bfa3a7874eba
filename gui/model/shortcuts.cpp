#include "gui/model/shortcuts.h"

#include <algorithm>

namespace dsgd::gui {

bool shortcut_commands(const KeyPresses& keys, const ControlState& c, Commands& commands) {
  if (keys.space) commands.push(c.paused || c.step_mode ? CommandKind::play : CommandKind::pause);
  if (c.live && (keys.right || keys.page_down))
    commands.push(keys.shift ? CommandKind::step_training : CommandKind::step_message);
  if (keys.plus != keys.minus)  // both at once: no change
    commands.push(CommandKind::set_speed,
                  std::clamp(keys.plus ? c.speed * 2 : c.speed / 2, 0.001, 1000.0));
  return keys.f;
}

}  // namespace dsgd::gui
