// The presenter's keys: a clicker sends Right or PageDown, a keyboard Space and the rest.
// What each key asks, given the controls' state: Commands for the run, and the window's own
// full-screen switch. The keys are read from ImGui by the views (views/keyboard.cpp); this
// mapping is tested alone. Not a key-binding editor: the keys are fixed.
#pragma once

#include "gui/model/commands.h"
#include "gui/model/snapshot.h"

namespace dsgd::gui {

// The keys pressed this frame (typed characters for the ones that depend on the layout).
struct KeyPresses {
  bool space = false;
  bool right = false;                // Right arrow
  bool page_down = false;            // what most clickers send for "next"
  bool shift = false;                // held
  bool plus = false, minus = false;  // '+' or '=', '-' typed
  bool f = false;                    // 'f' or 'F' typed
  bool escape = false;
  bool b = false;  // 'b' or 'B' typed
};

// Space: play or pause. Right, PageDown: step one message (Shift: one training step).
// + and -: speed times 2 or halved. Esc: close the error banner. In a replay, B bookmarks
// the time cursor and Right or PageDown jump to the next bookmark (replay_marks.h). Returns
// whether the window should switch between full screen and a window (F). Keys that mean
// nothing here (stepping a replay without bookmarks) do nothing.
bool shortcut_commands(const KeyPresses& keys, const Snapshot& snapshot, Commands& commands);

// Whether the error banner shows: an error the user has not closed.
bool error_banner_shown(const Snapshot& snapshot);
// The command that closes it.
Command dismiss_error(const Snapshot& snapshot);

}  // namespace dsgd::gui
