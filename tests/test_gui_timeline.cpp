// The timeline's window (gui/model/time_window.h) and what a restart does to it: the whole
// run by default, following its newest moment; a zoom follows at its width; a scroll pins;
// a restart forgets the old run's zoom. And what a live run's snapshot gives the timeline:
// its start, and a finished run's time standing still.
#include <catch2/catch.hpp>

#include "core/comm/collective_tags.h"
#include "gui/model/app.h"
#include "gui/model/layout.h"
#include "gui/model/session.h"
#include "gui/model/time_window.h"
#include "wait_until.h"

using namespace dsgd;
using namespace dsgd::gui;

TEST_CASE("timeline: the whole run by default, following the newest time", "[gui]") {
  TimeWindow w = time_window({.begin_s = 0, .now_s = 1.5, .live = true});
  CHECK(w.t0 == 0);
  CHECK(w.t1 == 1.5);
  w = time_window({.begin_s = 0, .now_s = 9.0, .live = true});
  CHECK(w.t1 == 9.0);  // never a sliding half second: the start stays in view
  CHECK(w.t0 == 0);
  // A replay shows the whole trace, wherever the cursor is.
  w = time_window({.begin_s = 1, .end_s = 4, .now_s = 2, .live = false});
  CHECK(w.t0 == 1);
  CHECK(w.t1 == 4);
}

TEST_CASE("timeline: a zoom follows at its width, a scroll pins the window", "[gui]") {
  TimeWindow w = time_window({.begin_s = 0, .now_s = 3, .live = true, .span_s = 0.5});
  CHECK(w.t0 == Approx(2.5));
  CHECK(w.t1 == 3);
  w = time_window({.begin_s = 0, .now_s = 0.2, .live = true, .span_s = 0.5});
  CHECK(w.t0 == 0);  // early in the run: the window starts at the start
  CHECK(w.t1 == Approx(0.5));
  w = time_window({.begin_s = 0, .now_s = 3, .live = true, .span_s = 0.5, .end_at_s = 1});
  CHECK(w.t0 == Approx(0.5));
  CHECK(w.t1 == 1);
  // A zoomed replay keeps its cursor in the middle.
  w = time_window({.begin_s = 0, .end_s = 10, .now_s = 5, .live = false, .span_s = 2});
  CHECK(w.t0 == Approx(4));
  CHECK(w.t1 == Approx(6));
}

TEST_CASE("timeline: a restart forgets the old run's zoom and selection", "[gui]") {
  SimSettings settings;
  settings.mode = RunMode::allreduce_demo;
  settings.run.steps = 1;
  settings.run.cluster.network.link.latency_s = 1e-4;
  GuiApp app;
  app.start_live(settings);
  ViewSettings v = app.view();
  v.timeline_span_s = 0.01;
  v.timeline_end_s = 0.02;
  v.selected_message = 3;
  Commands commands;
  commands.push(Command{.kind = CommandKind::set_view, .view = v});
  app.apply(commands);
  CHECK(app.view().timeline_end_s == 0.02);
  commands.push(Command{.kind = CommandKind::restart, .settings = settings});
  app.apply(commands);
  CHECK(app.view().timeline_span_s == 0);
  CHECK(app.view().timeline_end_s == 0);
  CHECK(app.view().selected_message == -1);
}

TEST_CASE("timeline: a finished run's time stands at its last event, from the run's start",
          "[gui]") {
  SimSettings settings;
  settings.mode = RunMode::allreduce_demo;
  settings.run.steps = 1;
  settings.run.cluster.network.link.latency_s = 1e-3;
  SimSession session;
  session.start(settings);
  REQUIRE(test::wait_for([&] { return !session.running(); }));
  const Snapshot s = session.snapshot({});
  CHECK(s.begin_s == 0);
  CHECK(s.now_s == s.end_s);     // the clock runs on; the run's time does not
  CHECK(s.events_from_s == -1);  // nothing dropped
  CHECK(s.in_flight.empty());
  // Every message's arrival is inside the window the timeline shows by default.
  const TimeWindow w = time_window({.begin_s = s.begin_s, .now_s = s.now_s, .live = true});
  for (const MessageView& m : s.messages) {
    CHECK(m.send_s >= w.t0);
    CHECK(m.arrive_s <= w.t1);
  }
}

TEST_CASE("sizes are decimal, as dsgd's flags read them", "[gui]") {
  // The flags read "MB" as 10^6 bytes (sim/link_model.h); a label must not say MB for 2^20.
  CHECK(format_bytes(512) == "512 B");
  CHECK(format_bytes(1500) == "1.5 kB");
  CHECK(format_bytes(4e6) == "4 MB");
  CHECK(format_bytes(1.25e9) == "1.25 GB");
}

TEST_CASE("settings: the link applies live, and a restart keeps the class's speed", "[gui]") {
  SimSettings settings;
  settings.mode = RunMode::allreduce_demo;
  settings.run.steps = 1000;  // long enough to change it while it runs
  settings.run.cluster.network.link.latency_s = 2e-3;
  GuiApp app;
  app.start_live(settings);
  CHECK(app.snapshot().network.find("latency 2 ms") == 0);
  SimSettings dragged = settings;
  dragged.run.cluster.network.link.latency_s = 28.7e-3;
  Commands commands;
  commands.push(Command{.kind = CommandKind::set_link, .settings = dragged});
  commands.push(CommandKind::set_speed, 0.1);
  app.apply(commands);
  const Snapshot s = app.snapshot();
  CHECK(s.network.find("latency 28.7 ms") == 0);  // not "2 ms" until a restart
  CHECK(s.link(0, 1).latency_s == Approx(28.7e-3));
  CHECK(s.controls.speed == Approx(0.1));
  commands.push(Command{.kind = CommandKind::restart, .settings = app.view().draft});
  app.apply(commands);
  CHECK(app.snapshot().controls.speed == Approx(0.1));
  app.session()->stop();
}

TEST_CASE("every collective's messages and slices have a colour of their own, not grey", "[gui]") {
  const Rgba grey = colour_for_op("no such op");
  int labels = 0;
  for (int tag = kCollectiveTagBase; tag < kCollectiveTagBase + 64; ++tag) {
    const CollectiveTag* c = find_collective_tag(tag);
    if (!c) continue;
    INFO(c->label);
    CHECK(colour_for_op(c->label) != grey);
    ++labels;
  }
  CHECK(labels >= 12);
  // Another algorithm of a collective takes its collective's colour.
  CHECK(colour_for_op("broadcast ring") == colour_for_op("broadcast"));
  CHECK(colour_for_op("all_reduce tree") != colour_for_op("all_reduce"));
}
