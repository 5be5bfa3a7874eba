#include "gui/model/shortcuts.h"

#include <algorithm>

#include "gui/model/replay_marks.h"

namespace dsgd::gui {

bool error_banner_shown(const Snapshot& s) {
  return !s.error.empty() && s.error != s.view.dismissed_error;
}

Command dismiss_error(const Snapshot& s) {
  Command c{.kind = CommandKind::set_view, .view = s.view};
  c.view.dismissed_error = s.error;
  return c;
}

namespace {

// B marks the cursor; Right and PageDown jump to the next mark (a clicker's "next") and
// hold the replay there.
void replay_keys(const KeyPresses& keys, const Snapshot& s, Commands& commands) {
  if (s.controls.live || s.lesson.active || s.world == 0) return;
  if (keys.b) commands.push(add_bookmark(s, s.now_s));
  if (keys.right || keys.page_down)
    if (const std::optional<double> next = next_bookmark(s)) {
      commands.push(CommandKind::pause);
      commands.push(CommandKind::seek, *next);
    }
}

}  // namespace

bool shortcut_commands(const KeyPresses& keys, const Snapshot& s, Commands& commands) {
  const ControlState& c = s.controls;
  if (keys.escape && error_banner_shown(s)) commands.push(dismiss_error(s));
  if (keys.space) commands.push(c.paused || c.step_mode ? CommandKind::play : CommandKind::pause);
  // A lesson steps, also one whose ranks are a classroom's laptops (watched, so not live).
  if ((c.live || s.lesson.active) && (keys.right || keys.page_down))
    commands.push(keys.shift ? CommandKind::step_training : CommandKind::step_message);
  replay_keys(keys, s, commands);
  if (keys.plus != keys.minus)  // both at once: no change
    commands.push(CommandKind::set_speed,
                  std::clamp(keys.plus ? c.speed * 2 : c.speed / 2, 0.001, 1000.0));
  return keys.f;
}

}  // namespace dsgd::gui
