// The presenter's keys (gui/model/shortcuts.h): what Space, Right, PageDown, Shift+Right,
// + and - ask of a live run and of a replay, that F asks the window to go full screen, and
// that Esc closes the error banner until another error comes.
#include <catch2/catch.hpp>

#include <vector>

#include "gui/model/shortcuts.h"

using namespace dsgd::gui;

namespace {

Snapshot with(const ControlState& controls) {
  Snapshot s;
  s.controls = controls;
  return s;
}

std::vector<CommandKind> kinds_of(const KeyPresses& keys, const ControlState& controls,
                                  bool* full_screen = nullptr) {
  Commands commands;
  const bool f = shortcut_commands(keys, with(controls), commands);
  if (full_screen) *full_screen = f;
  std::vector<CommandKind> kinds;
  for (const Command& c : commands.pending())
    kinds.push_back(c.kind);
  return kinds;
}

using Kinds = std::vector<CommandKind>;

}  // namespace

TEST_CASE("a clicker steps the run: Right and PageDown a message, Shift+Right a step", "[gui]") {
  const ControlState live{.live = true, .running = true, .step_mode = true};
  CHECK(kinds_of({.right = true}, live) == Kinds{CommandKind::step_message});
  CHECK(kinds_of({.page_down = true}, live) == Kinds{CommandKind::step_message});
  CHECK(kinds_of({.right = true, .shift = true}, live) == Kinds{CommandKind::step_training});
  CHECK(kinds_of({.shift = true}, live).empty());  // Shift alone asks nothing
  const ControlState replay{.live = false};
  CHECK(kinds_of({.right = true}, replay).empty());  // a replay has no messages to release
}

TEST_CASE("a clicker steps a classroom's lesson, which the window watches", "[gui][classroom]") {
  Snapshot s = with({.live = false, .running = true, .step_mode = true});
  s.world = 4;  // its laptops' ranks, watched: not a live run of the window's own
  s.lesson.active = true;
  for (const KeyPresses keys : {KeyPresses{.right = true}, KeyPresses{.page_down = true}}) {
    Commands commands;
    shortcut_commands(keys, s, commands);
    REQUIRE(commands.size() == 1);  // no jump to a bookmark as in a replay
    CHECK(commands.pending()[0].kind == CommandKind::step_message);
  }
}

TEST_CASE("Space plays and pauses, + and - double and halve the speed", "[gui]") {
  CHECK(kinds_of({.space = true}, {.live = true}) == Kinds{CommandKind::pause});
  CHECK(kinds_of({.space = true}, {.live = true, .paused = true}) == Kinds{CommandKind::play});
  CHECK(kinds_of({.space = true}, {.live = true, .step_mode = true}) == Kinds{CommandKind::play});
  Commands commands;
  shortcut_commands({.plus = true}, with({.live = true, .speed = 0.5}), commands);
  shortcut_commands({.minus = true}, with({.live = true, .speed = 0.5}), commands);
  shortcut_commands({.minus = true}, with({.live = true, .speed = 0.001}), commands);
  shortcut_commands({.plus = true, .minus = true}, with({.live = true}), commands);  // no change
  REQUIRE(commands.size() == 3);
  CHECK(commands.pending()[0].kind == CommandKind::set_speed);
  CHECK(commands.pending()[0].value == 1.0);
  CHECK(commands.pending()[1].value == 0.25);
  CHECK(commands.pending()[2].value == 0.001);  // the slowest the clock runs
}

TEST_CASE("F asks the window to switch to full screen, and nothing of the run", "[gui]") {
  bool full_screen = false;
  CHECK(kinds_of({.f = true}, {.live = true}, &full_screen).empty());
  CHECK(full_screen);
  kinds_of({}, {.live = true}, &full_screen);
  CHECK_FALSE(full_screen);
}

TEST_CASE("Esc closes the error banner until another error comes", "[gui]") {
  Snapshot s;
  s.error = "rank 3: lost rank 2";
  REQUIRE(error_banner_shown(s));
  Commands commands;
  shortcut_commands({.escape = true}, s, commands);
  REQUIRE(commands.size() == 1);
  REQUIRE(commands.pending()[0].kind == CommandKind::set_view);
  s.view = commands.pending()[0].view;
  CHECK_FALSE(error_banner_shown(s));
  commands.drain();
  shortcut_commands({.escape = true}, s, commands);  // nothing left to close
  CHECK(commands.empty());
  s.error = "rank 1: lost rank 0";
  CHECK(error_banner_shown(s));
  s.error.clear();
  CHECK_FALSE(error_banner_shown(s));
}
