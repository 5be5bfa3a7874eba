// A replay's bookmarks and the convergence plot's cursor (gui/model/replay_marks.h), the B and
// Right keys that use them (shortcuts.h), and the replay's speed as the controls show it.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <vector>

#include "core/io/trace.h"
#include "gui/model/app.h"
#include "gui/model/replay_marks.h"
#include "gui/model/shortcuts.h"
#include "gui_runs.h"

using namespace dsgd;
using namespace dsgd::gui;

namespace {

// A replay of 10 s with the cursor at `now_s`, bookmarks as given.
Snapshot replay_at(double now_s, std::vector<double> bookmarks = {}) {
  Snapshot s;
  s.world = 2;
  s.begin_s = 0;
  s.end_s = 10;
  s.now_s = now_s;
  s.view.bookmarks = std::move(bookmarks);
  return s;
}

}  // namespace

TEST_CASE("bookmarks stay sorted, once each, and can be removed", "[gui]") {
  Snapshot s = replay_at(5);
  s.view = add_bookmark(s, 5).view;
  s.view = add_bookmark(s, 2).view;
  s.view = add_bookmark(s, 7.5).view;
  s.view = add_bookmark(s, 5).view;  // already marked
  CHECK(s.view.bookmarks == std::vector<double>{2, 5, 7.5});
  const Command removed = remove_bookmark(s, 1);
  CHECK(removed.kind == CommandKind::set_view);
  CHECK(removed.view.bookmarks == std::vector<double>{2, 7.5});
  CHECK(remove_bookmark(s, 9).view.bookmarks == s.view.bookmarks);  // no such bookmark
}

TEST_CASE("the next bookmark is the first after the cursor, wrapping around", "[gui]") {
  CHECK_FALSE(next_bookmark(replay_at(5)));
  CHECK(next_bookmark(replay_at(1, {2, 5, 7.5})) == 2);
  CHECK(next_bookmark(replay_at(5, {2, 5, 7.5})) == 7.5);  // at a mark: the one after it
  CHECK(next_bookmark(replay_at(8, {2, 5, 7.5})) == 2);
}

TEST_CASE("in a replay B bookmarks the cursor and Right jumps to the next bookmark", "[gui]") {
  Commands commands;
  shortcut_commands({.b = true}, replay_at(3.25), commands);
  REQUIRE(commands.size() == 1);
  CHECK(commands.pending()[0].kind == CommandKind::set_view);
  CHECK(commands.pending()[0].view.bookmarks == std::vector<double>{3.25});
  commands.drain();
  shortcut_commands({.right = true}, replay_at(4, {3.25, 6}), commands);
  REQUIRE(commands.size() == 2);
  CHECK(commands.pending()[0].kind == CommandKind::pause);  // held there, to talk about it
  CHECK(commands.pending()[1].kind == CommandKind::seek);
  CHECK(commands.pending()[1].value == 6);
  commands.drain();
  // A live run: B marks nothing, Right steps a message as before.
  Snapshot live = replay_at(1);
  live.controls.live = true;
  shortcut_commands({.right = true, .b = true}, live, commands);
  REQUIRE(commands.size() == 1);
  CHECK(commands.pending()[0].kind == CommandKind::step_message);
}

TEST_CASE("the plot's cursor is the last loss point of the steps finished by then", "[gui]") {
  Curve curve;
  for (int64_t step : {10, 20, 30})
    curve.points.push_back({.step = step, .loss = 1.0 / step});
  CHECK_FALSE(curve_point_at(curve, 5));
  CHECK(curve_point_at(curve, 10) == 0u);
  CHECK(curve_point_at(curve, 29) == 1u);
  CHECK(curve_point_at(curve, 99) == 2u);
  Snapshot s = replay_at(5);
  CHECK(step_at_cursor(s) == 0);
  s.steps = {{.rank = 0, .step = 11, .end_s = 4},
             {.rank = 1, .step = 11, .end_s = 4.5},
             {.rank = 0, .step = 12, .end_s = 5, .open = true}};
  CHECK(step_at_cursor(s) == 11);  // step 12 has not ended: its loss is not known yet
}

TEST_CASE("a replay's controls show its speed, and another trace starts without bookmarks",
          "[gui]") {
  const std::string path =
      (std::filesystem::temp_directory_path() / "dsgd_gui_test_marks.json").string();
  std::ofstream(path) << trace_json(dsgd::test::demo_events(4, Algorithm::ring, 8));
  GuiApp app;
  app.open_replay(path);
  CHECK(app.snapshot().controls.speed == 1);  // the whole trace in 20 s
  Commands commands;
  commands.push(CommandKind::set_speed, 0.1);
  commands.push(add_bookmark(app.snapshot(), app.cursor_s()));
  app.apply(commands);
  const Snapshot s = app.snapshot();
  INFO(s.error);
  CHECK(s.controls.speed == Approx(0.1));  // the preset 0.1x shows as chosen
  CHECK(s.view.bookmarks.size() == 1);
  app.open_replay(path);
  CHECK(app.snapshot().view.bookmarks.empty());
}
