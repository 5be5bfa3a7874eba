// dsgd-gui logic without OpenGL: layouts, packet positions from model time, ring chunk
// bookkeeping checked against real all_reduce payloads (the schedule itself is tested with
// the event fold, test_event_fold.cpp), other algorithms labelled as themselves, snapshots,
// trace replay (and its errors), the live session, commands, options and the PNG helpers.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "core/comm/chunks.h"
#include "core/comm/collectives.h"
#include "core/errors.h"
#include "core/io/trace.h"
#include "core/io/trace_summary.h"
#include "gui/model/app.h"
#include "gui/model/lane_label.h"
#include "gui/model/layout.h"
#include "gui/model/options.h"
#include "gui/model/png.h"
#include "gui/model/session.h"
#include "gui/model/snapshot.h"
#include "gui/model/trace_replay.h"
#include "sim/cluster.h"
#include "sim/cluster_shape.h"
#include "sim/run_spec.h"
#include "gui_runs.h"
#include "wait_until.h"

using namespace dsgd;
using namespace dsgd::gui;
using dsgd::test::demo_events;
using dsgd::test::wait_for;

namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("dsgd_gui_test_" + name)).string();
}

}  // namespace

TEST_CASE("layouts place every rank inside the unit square, distinct", "[gui]") {
  for (Layout layout : {Layout::ring, Layout::star, Layout::grid}) {
    for (int world : {1, 2, 3, 4, 7, 16, 32}) {
      const auto pos = layout_positions(layout, world);
      REQUIRE(pos.size() == static_cast<size_t>(world));
      std::set<std::pair<int, int>> seen;
      for (const Vec2& p : pos) {
        CHECK(p.x >= 0);
        CHECK(p.x <= 1);
        CHECK(p.y >= 0);
        CHECK(p.y <= 1);
        seen.insert({static_cast<int>(p.x * 1000), static_cast<int>(p.y * 1000)});
      }
      CHECK(seen.size() == static_cast<size_t>(world));
    }
  }
  // Ring: rank 0 on top, then clockwise (rank 1 of 4 on the right), all on one circle.
  const auto ring = layout_positions(Layout::ring, 4);
  CHECK(ring[0].x == Approx(0.5));
  CHECK(ring[0].y == Approx(0.05));
  CHECK(ring[1].x == Approx(0.95));
  CHECK(ring[1].y == Approx(0.5));
  for (const Vec2& p : ring)
    CHECK(std::hypot(p.x - 0.5, p.y - 0.5) == Approx(0.45));
  // Star: the root in the centre. Grid: 5 ranks in rows of 3.
  CHECK(layout_positions(Layout::star, 5)[0].x == Approx(0.5));
  CHECK(layout_positions(Layout::star, 5)[0].y == Approx(0.5));
  const auto grid = layout_positions(Layout::grid, 5);
  CHECK(grid[0].y == grid[2].y);
  CHECK(grid[3].y > grid[0].y);
  CHECK(grid[3].x == grid[0].x);
  CHECK(layout_positions(Layout::ring, 0).empty());

  CHECK(resolve_layout(Layout::automatic, Algorithm::naive, 4) == Layout::star);
  CHECK(resolve_layout(Layout::automatic, Algorithm::ring, 4) == Layout::ring);
  CHECK(resolve_layout(Layout::automatic, Algorithm::ring, 32) == Layout::grid);
  CHECK(resolve_layout(Layout::star, Algorithm::ring, 32) == Layout::star);
}

TEST_CASE("packets move along their link with model time", "[gui]") {
  CHECK(packet_progress(1.0, 3.0, 0.5) == 0);
  CHECK(packet_progress(1.0, 3.0, 1.0) == 0);
  CHECK(packet_progress(1.0, 3.0, 2.0) == Approx(0.5));
  CHECK(packet_progress(1.0, 3.0, 2.5) == Approx(0.75));
  CHECK(packet_progress(1.0, 3.0, 9.0) == 1);
  CHECK(packet_progress(1.0, 1.0, 1.0) == 1);  // no travel time: there at once
  CHECK(packet_progress(1.0, 1.0, 0.9) == 0);

  const Vec2 a{0, 0}, b{1, 0};
  const Vec2 mid = packet_position(a, b, 0.5, 0);
  CHECK(mid.x == Approx(0.5));
  CHECK(mid.y == Approx(0));
  // The offset moves it to the left of the direction of travel (y grows downwards), so the
  // two directions of one link are apart.
  const Vec2 there = packet_position(a, b, 0.5, 0.1f), back = packet_position(b, a, 0.5, 0.1f);
  CHECK(there.y == Approx(-0.1));
  CHECK(back.y == Approx(0.1));
  CHECK(packet_position(a, b, 2.0, 0).x == Approx(1));

  // Through a snapshot: a 1000-byte message sent at model time 1 ms, received at 3 ms.
  std::vector<Event> events = {
      {.kind = EventKind::send_begin,
       .rank = 0,
       .peer = 1,
       .tag = 5,
       .bytes = 1000,
       .model_s = 1e-3},
      {.kind = EventKind::recv_end, .rank = 1, .peer = 0, .tag = 5, .bytes = 1000, .model_s = 3e-3},
  };
  Snapshot s = build_snapshot(events, {.time_base = TimeBase::model, .now_s = 2e-3});
  REQUIRE(s.messages.size() == 1);
  REQUIRE(s.in_flight.size() == 1);
  const MessageView& m = s.messages[0];
  CHECK_FALSE(m.estimated);
  CHECK(m.arrive_s == Approx(3e-3));
  CHECK(packet_progress(m.send_s, m.arrive_s, s.now_s) == Approx(0.5));
  CHECK(std::string(m.op) == "p2p");
  s = build_snapshot(events, {.time_base = TimeBase::model, .now_s = 3e-3});
  CHECK(s.in_flight.empty());
  CHECK(s.messages[0].arrived);
  s = build_snapshot(events, {.time_base = TimeBase::model, .now_s = 0.5e-3});
  CHECK(s.messages.empty());  // not sent yet
}

TEST_CASE("in-flight messages without a receive get an estimated arrival", "[gui]") {
  std::vector<Event> events = {
      {.kind = EventKind::send_begin, .rank = 0, .peer = 1, .tag = 0, .bytes = 1000, .wall_s = 1.0},
  };
  SnapshotInputs in{.world = 2, .now_s = 1.0};
  in.links.assign(4, LinkView{.latency_s = 0.002, .bandwidth_Bps = 1e6});
  const Snapshot s = build_snapshot(events, in);
  REQUIRE(s.in_flight.size() == 1);
  CHECK(s.messages[0].estimated);
  CHECK(s.messages[0].arrive_s == Approx(1.0 + 0.002 + 0.001));
}

TEST_CASE("chunks the snapshot names match the values a real ring all_reduce sends", "[gui]") {
  for (int world : {2, 3, 4, 5}) {
    const int elements = 2 * world + 1;  // uneven chunks
    const std::vector<Event> events = demo_events(world, Algorithm::ring, elements);
    const Snapshot s = build_snapshot(
        events, {.world = world, .time_base = TimeBase::model, .demo_elements = elements});
    const Chunks chunks{static_cast<size_t>(elements), world};
    int ring_messages = 0;
    for (const MessageView& m : s.messages) {
      if (m.chunk < 0) continue;
      ++ring_messages;
      REQUIRE(m.preview_count > 0);
      const int first = static_cast<int>(chunks.offset(m.chunk));
      INFO("world " << world << " " << m.src << "->" << m.dst << " #" << m.k);
      // Sums of small integers are exact in any order.
      CHECK(m.preview[0] == demo_partial_sum(world, m.src, first, m.contributions));
      CHECK(m.bytes == chunks.size(m.chunk) * sizeof(float));
      CHECK(m.arrived);
      CHECK_FALSE(m.estimated);
      CHECK(m.arrive_s >= m.send_s);
    }
    CHECK(ring_messages == 2 * (world - 1) * world);
    // At the end every rank holds the full sum.
    for (int r = 0; r < world; ++r)
      for (int i = 0; i < elements; ++i)
        CHECK(s.gradients.values[r][i] == demo_partial_sum(world, 0, i, world));
    CHECK(s.in_flight.empty());

    // Half way through (model time), some chunks are partial and some ranks busy.
    const double mid = (s.begin_s + s.end_s) / 2;
    const Snapshot h = build_snapshot(
        events,
        {.world = world, .time_base = TimeBase::model, .now_s = mid, .demo_elements = elements});
    int partial = 0;
    for (const auto& row : h.gradients.contributions)
      for (int n : row)
        partial += n < world;
    CHECK(partial > 0);
    CHECK(h.messages.size() <= s.messages.size());
  }
}

TEST_CASE("tree and halving_doubling demos are labelled as themselves, never as the ring",
          "[gui]") {
  for (Algorithm algorithm : {Algorithm::tree, Algorithm::halving_doubling}) {
    const std::string label = std::string("all_reduce ") + to_string(algorithm);
    INFO(label);
    const int world = 5, elements = 11;
    const std::vector<Event> events = demo_events(world, algorithm, elements);
    // The session asks for the ring (its default) before any message shows what runs.
    const SnapshotInputs in{.world = world,
                            .time_base = TimeBase::model,
                            .algorithm = Algorithm::ring,
                            .demo_elements = elements};
    const Snapshot s = build_snapshot(events, in);
    REQUIRE_FALSE(s.messages.empty());
    std::set<Phase> phases;
    for (const MessageView& m : s.messages) {
      CHECK(std::string(m.op) == label);
      CHECK(m.chunk == -1);
      CHECK(m.step >= 0);
      phases.insert(m.phase);
    }
    if (algorithm == Algorithm::tree)
      CHECK(phases == std::set<Phase>{Phase::reduce, Phase::broadcast});
    else
      CHECK(phases ==
            std::set<Phase>{Phase::fold, Phase::reduce_scatter, Phase::all_gather, Phase::unfold});
    CHECK_FALSE(s.gradients.ring);
    CHECK(std::string(s.gradients.label) == label);
    CHECK(s.gradients.chunks == 1);
    for (int r = 0; r < world; ++r) {
      CHECK(s.gradients.contributions[r] == std::vector<int>{world});
      for (int i = 0; i < elements; ++i)
        CHECK(s.gradients.values[r][i] == demo_partial_sum(world, 0, i, world));
    }
    // Half way: each rank holds its own values or the full sum, nothing ring-shaped.
    const double mid = (s.begin_s + s.end_s) / 2;
    SnapshotInputs half = in;
    half.now_s = mid;
    const Snapshot h = build_snapshot(events, half);
    CHECK_FALSE(h.gradients.ring);
    for (const auto& row : h.gradients.contributions) {
      REQUIRE(row.size() == 1);
      CHECK((row[0] == 1 || row[0] == world));
    }
  }
}

TEST_CASE("other algorithms show the full sum once the all_reduce ends", "[gui]") {
  const std::vector<Event> events = demo_events(4, Algorithm::naive, 6);
  const Snapshot s = build_snapshot(events, {.world = 4,
                                             .time_base = TimeBase::model,
                                             .algorithm = Algorithm::naive,
                                             .demo_elements = 6});
  CHECK_FALSE(s.gradients.ring);
  for (const auto& row : s.gradients.contributions)
    for (int n : row)
      CHECK(n == 4);
  for (const MessageView& m : s.messages)
    CHECK(std::string(m.op) == "all_reduce naive");
  // Slices: one all_reduce per rank on the communication lane.
  int collectives = 0;
  for (const SliceView& sl : s.slices)
    collectives += sl.lane == Lane::comm && std::string(sl.name) == "all_reduce";
  CHECK(collectives == 4);
}

TEST_CASE("a trace replays into the same messages the run sent", "[gui]") {
  const std::vector<Event> events = demo_events(4, Algorithm::ring, 8);
  const Snapshot live = build_snapshot(events, {.time_base = TimeBase::model});
  for (TimeBase base : {TimeBase::wall, TimeBase::model}) {
    const std::string text = trace_json(events, {.time_base = base});
    const Replay replay = Replay::parse(text, "run.json");
    CHECK(replay.world() == 4);
    CHECK(replay.time_base() == TimeBase::model);  // every message carries model time
    const Snapshot s = build_snapshot(replay.events(), {.time_base = replay.time_base()});
    REQUIRE(s.messages.size() == live.messages.size());
    std::multiset<std::tuple<int, int, uint64_t, int>> a, b;
    for (const MessageView& m : live.messages)
      a.insert({m.src, m.dst, m.k, m.chunk});
    for (const MessageView& m : s.messages) {
      b.insert({m.src, m.dst, m.k, m.chunk});
      CHECK(m.arrived);
      CHECK(m.arrive_s >= m.send_s);
    }
    CHECK(a == b);
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c)
        CHECK(s.gradients.contributions[r][c] == 4);
    // Scrubbing to the start shows nothing sent yet.
    const Snapshot start = build_snapshot(
        replay.events(), {.time_base = replay.time_base(), .now_s = replay.begin_s()});
    CHECK(start.in_flight.size() <= 4);
  }
}

TEST_CASE("a replay shows the recorded run's description and algorithm", "[gui]") {
  const std::vector<Event> events = demo_events(4, Algorithm::tree, 8);
  const std::string run = R"({"nodes":4,"allreduce":"tree"})";
  const Replay replay = Replay::parse(trace_json(events, {.run_json = run}), "run.json");
  CHECK(replay.run_json() == run);
  CHECK(replay.all_reduce_algorithm() == Algorithm::tree);
  CHECK(Replay::parse(trace_json(events), "plain.json").run_json().empty());
}

TEST_CASE("a replay of a SimGrid run on a fat-tree shows its links, each at --latency", "[gui]") {
  // The simulated nodes' Network refuses SimGrid's topologies; the replay must not build one.
  sim::RunSpec recorded;
  recorded.backend = sim::Backend::simgrid;
  recorded.cluster.nodes = 4;
  sim::set_topology(recorded.cluster.network, "fat-tree");
  recorded.cluster.network.link.latency_s = 5e-6;
  const std::string path = temp_path("fat_tree4.json");
  std::ofstream(path) << trace_json(demo_events(4, Algorithm::ring, 8),
                                    {.run_json = sim::run_spec_json(recorded)});
  GuiApp app;
  app.open_replay(path);
  const Snapshot s = app.snapshot();
  INFO(s.error);
  CHECK(s.error.empty());
  REQUIRE(s.links.size() == 16);
  CHECK(s.link(0, 3).latency_s == Approx(5e-6));
  CHECK_THAT(s.network, Catch::Contains("latency 5 us a link") && Catch::Contains("fat-tree"));
}

TEST_CASE("a replay of 72 ranks shows 32 lanes, each a group of ranks", "[gui][summary]") {
  sim::RunSpec recorded;
  recorded.cluster.nodes = 72;
  recorded.cluster.network.link.latency_s = 1e-3;
  const std::string path = temp_path("ring72.json");
  const std::vector<Event> events = demo_events(72, Algorithm::ring, 72);
  std::ofstream(path) << trace_json(events, {.run_json = sim::run_spec_json(recorded)});
  GuiApp app;
  app.open_replay(path);
  app.seek_fraction(1);
  const Snapshot s = app.snapshot();
  INFO(s.error);
  CHECK(s.error.empty());
  CHECK(s.world == kSummaryGroups);
  CHECK(s.summary.ranks == 72);
  CHECK(s.title.find("(72 ranks shown as 32 groups)") != std::string::npos);
  REQUIRE(s.links.size() == 32 * 32);
  CHECK(s.link(0, 31).latency_s == Approx(1e-3));
  // The ring crosses between neighbouring groups only: one joined message each way.
  CHECK(s.messages.size() == 32);
  for (const MessageView& m : s.messages)
    CHECK(m.dst == (m.src + 1) % 32);
  CHECK(lane_label(s.summary, 0) == "ranks 0-2");  // 72 = 8 groups of 3 and 24 of 2
  CHECK(lane_label(s.summary, 31) == "ranks 70-71");
  CHECK(lane_label({}, 5) == "rank 5");
}

TEST_CASE("every panel of a replay shows the settings of the run the trace recorded", "[gui]") {
  // An 8-node halving_doubling run on 100 Mbit/s links, recorded as dsgd train records it.
  sim::RunSpec recorded;
  recorded.cluster.nodes = 8;
  recorded.allreduce = Algorithm::halving_doubling;
  recorded.cluster.network.link.bandwidth_Bps = 12.5e6;
  recorded.steps = 20;
  const std::string path = temp_path("hd8.json");
  std::ofstream(path) << trace_json(demo_events(8, Algorithm::halving_doubling, 16),
                                    {.run_json = sim::run_spec_json(recorded)});
  GuiApp app;
  app.view().draft = SimSettings{};  // the window's own defaults: 4 nodes, ring, 1 Gbit/s
  app.open_replay(path);
  const Snapshot s = app.snapshot();
  INFO(s.error);
  CHECK(s.error.empty());
  CHECK(s.world == 8);
  CHECK(s.title.find("halving_doubling, 8 nodes, 100 Mbit/s") != std::string::npos);
  CHECK(s.network.find("bandwidth 100 Mbit/s") != std::string::npos);  // topology caption
  CHECK(s.controls.settings.run.cluster.nodes == 8);                   // controls panel
  CHECK(app.view().draft.run.cluster.nodes == 8);  // the settings editor, and Restart
  CHECK(app.view().draft.run.allreduce == Algorithm::halving_doubling);
  CHECK(std::string(s.gradients.label).find("halving_doubling") != std::string::npos);
  REQUIRE(s.links.size() == 64);
  CHECK(s.link(0, 1).bandwidth_Bps == Approx(12.5e6));
  for (const MessageView& m : s.messages) {  // topology and timeline labels
    INFO(m.op);
    CHECK(std::string(m.op).find("ring") == std::string::npos);
  }
}

TEST_CASE("a malformed trace is an error naming the file, never a crash", "[gui]") {
  const auto fails = [](const std::string& text, const std::string& what) {
    try {
      Replay::parse(text, "bad.json");
      FAIL("parsed: " << text);
    } catch (const DataError& e) {
      const std::string message = e.what();
      INFO(message);
      CHECK(message.find("bad.json") != std::string::npos);
      CHECK(message.find(what) != std::string::npos);
    }
  };
  fails("", "invalid JSON");
  fails("{\"traceEvents\": [", "invalid JSON");
  fails("{\"foo\": 1}", "traceEvents");
  fails("42", "traceEvents");
  fails("{\"traceEvents\": []}", "no dsgd events");
  fails("{\"traceEvents\": [1]}", "#1");
  fails(R"({"traceEvents":[{"ph":"X","cat":"p2p","pid":0,"ts":1,"dur":1,"args":{"dir":"up"}}]})",
        "dir/src/dst");
  fails(R"({"traceEvents":[{"ph":"X","cat":"compute","pid":"zero","ts":1,"dur":1}]})",
        "not a number");
  fails(R"({"traceEvents":[{"ph":"X","cat":"step","pid":0,"ts":1,"dur":-5,"args":{}}]})",
        "negative");
  CHECK_THROWS_AS(Replay::load(temp_path("missing.json")), DataError);

  // The app shows the error instead of replaying.
  const std::string path = temp_path("bad.json");
  std::ofstream(path) << "{not json";
  GuiApp app;
  app.open_replay(path);
  const Snapshot s = app.snapshot();
  CHECK(s.error.find("invalid JSON") != std::string::npos);
  CHECK(s.world == 0);
  std::filesystem::remove(path);
}

TEST_CASE("commands queue up and drain once", "[gui]") {
  Commands c;
  c.push(CommandKind::pause);
  c.push(CommandKind::set_speed, 0.5);
  c.push(Command{.kind = CommandKind::select_message, .index = 3});
  REQUIRE(c.size() == 3);
  const auto drained = c.drain();
  CHECK(c.empty());
  REQUIRE(drained.size() == 3);
  CHECK(drained[1].value == 0.5);
  CHECK(drained[2].index == 3);

  GuiApp app;
  Commands view;
  ViewSettings v;
  v.log_loss = true;
  view.push(Command{.kind = CommandKind::set_view, .view = v});
  view.push(Command{.kind = CommandKind::select_message, .index = 7});
  app.apply(view);
  CHECK(app.snapshot().view.log_loss);
  CHECK(app.snapshot().view.selected_message == 7);
}

TEST_CASE("a live session trains, steps, restarts and keeps the old curve", "[gui]") {
  SimSettings settings;
  settings.run.steps = 6;
  settings.run.model = "softmax";
  settings.run.batch = 64;
  settings.run.cluster.network.link.latency_s = 1e-4;
  SimSession session;
  session.start(settings);
  REQUIRE(wait_for([&] { return !session.running(); }));
  CHECK(session.error().empty());
  Snapshot s = session.snapshot({});
  CHECK(s.world == 4);
  CHECK(s.controls.live);
  CHECK(s.controls.step == 6);
  REQUIRE(s.curves.size() == 1);
  CHECK(s.curves[0].points.size() == 6);
  CHECK(s.curves[0].points.back().model_s > 0);
  CHECK_FALSE(s.messages.empty());
  CHECK(s.links.size() == 16);
  CHECK(s.link(0, 1).latency_s == Approx(1e-4));
  for (const RankView& r : s.ranks)
    CHECK(r.step == 6);

  // Step mode: nothing moves until a message is stepped; then pause and restart. The step
  // gate holds every message until SimControl::step releases one, and the session calls
  // that only from poll() with a step_message pending: so the messages that arrived are
  // the steps taken, whenever the snapshot is read (no waiting to see that nothing moves).
  settings.mode = RunMode::allreduce_demo;
  settings.step_mode = true;
  settings.run.steps = 1;
  session.start(settings);
  const auto arrived = [](const Snapshot& snap) {
    return std::count_if(snap.messages.begin(), snap.messages.end(),
                         [](const MessageView& m) { return m.arrived; });
  };
  REQUIRE(wait_for([&] { return !session.snapshot({}).in_flight.empty(); }));
  for (int i = 0; i < 10; ++i)
    session.poll();  // no step pending: releases nothing
  s = session.snapshot({});
  CHECK(arrived(s) == 0);
  session.apply(Command{.kind = CommandKind::step_message});
  REQUIRE(wait_for([&] {
    session.poll();  // as each frame does
    return arrived(session.snapshot({})) > 0;
  }));
  for (int i = 0; i < 10; ++i)
    session.poll();  // the step is spent: releases nothing more
  s = session.snapshot({});
  CHECK(arrived(s) == 1);
  CHECK_FALSE(s.in_flight.empty());  // the rest are still held
  // Network time stands at that message's arrival, however long the class looks at it
  // (50 ms of real time spun on the steady clock: the scenario, not a wait).
  const auto stepped = std::find_if(s.messages.begin(), s.messages.end(),
                                    [](const MessageView& m) { return m.arrived; });
  CHECK(s.now_s == Approx(stepped->arrive_s));
  const auto later = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
  while (std::chrono::steady_clock::now() < later)
    std::this_thread::yield();
  CHECK(session.snapshot({}).now_s == s.now_s);
  CHECK(s.controls.step_mode);
  CHECK(s.gradients.elements == 8);
  // Restarting from step mode does not hang, and the training curve stays for comparison.
  session.start(settings);
  session.stop();
  s = session.snapshot({});
  REQUIRE(s.curves.size() == 1);
  CHECK(s.curves[0].points.size() == 6);
}

TEST_CASE("a crash fault ends the run with an error shown, not a hang", "[gui]") {
  SimSettings settings;
  settings.run.steps = 20;
  settings.run.model = "softmax";
  settings.run.batch = 64;
  settings.run.cluster.network.link.latency_s = 1e-4;
  set_crash_step(settings.run, 2, 3);
  SimSession session;
  session.start(settings);
  REQUIRE(wait_for([&] { return !session.running(); }));
  const Snapshot s = session.snapshot({});
  CHECK_FALSE(s.error.empty());
  CHECK(s.error_is_fault);  // the run's own fault, not bad input
  CHECK(s.controls.status == "ended by a fault");
  CHECK(s.ranks[2].crashed);
}

TEST_CASE("dsgd-gui options", "[gui]") {
  GuiOptions o = parse_gui_options({"--nodes", "6", "--latency", "5ms", "--straggler", "2:3",
                                    "--crash", "1@20", "--view", "topology", "--theme", "projector",
                                    "--mode", "allreduce"});
  CHECK(o.sim.run.cluster.nodes == 6);
  CHECK(o.sim.run.cluster.network.link.latency_s == Approx(5e-3));
  CHECK(straggler_of(o.sim.run, 2) == 3.0);
  CHECK(crash_step_of(o.sim.run, 1) == 20);
  CHECK(o.view == View::topology);
  CHECK(o.view_settings.ui_scale >= 1.5f);
  CHECK(o.sim.mode == RunMode::allreduce_demo);
  o = parse_gui_options(
      {"--scenario", std::string(DSGD_SOURCE_DIR) + "/assets/scenarios/straggler.toml"});
  CHECK(straggler_of(o.sim.run, 2) == 3.0);
  CHECK(o.sim.run.cluster.network.link.latency_s == Approx(1e-3));
  // The flags of `dsgd train`, with its meaning and checks: a crash at a time, a fault on a
  // rank past the last refused (not skipped), the window's defaults where nothing is said.
  o = parse_gui_options({"--crash", "1@1.5s", "--allreduce", "halving_doubling"});
  REQUIRE(o.sim.run.cluster.node_overrides.count(1));
  CHECK(o.sim.run.cluster.node_overrides.at(1).crash_at_s == Approx(1.5));
  CHECK(o.sim.run.allreduce == Algorithm::halving_doubling);
  CHECK(o.sim.run.cluster.network.link.latency_s == Approx(2e-3));
  CHECK(o.sim.run.cluster.network.link.bandwidth_Bps == Approx(125e6));
  CHECK(parse_gui_options({"--algorithm", "tree"}).sim.run.allreduce == Algorithm::tree);
  // --lang zh: the window, and the lessons the picker offers, in Chinese.
  o = parse_gui_options({"--lang", "zh"});
  CHECK(o.view_settings.chinese);
  CHECK(o.view_settings.lesson_zh);
  CHECK_FALSE(parse_gui_options({}).view_settings.lesson_zh);
  CHECK_THROWS_WITH(parse_gui_options({"--nodes", "4", "--straggler", "7:2"}),
                    Catch::Contains("rank 7"));
  CHECK_THROWS_AS(parse_gui_options({"--nodes", "300"}), UsageError);
  CHECK_THROWS_AS(parse_gui_options({"--view", "nope"}), UsageError);
  CHECK_THROWS_AS(parse_gui_options({"--headless"}), UsageError);
  CHECK_THROWS_AS(parse_gui_options({"--straggler", "x"}), UsageError);
  CHECK_THROWS_AS(parse_gui_options({"--nodes", "0"}), UsageError);
  CHECK_THROWS_AS(parse_gui_options({"--bogus"}), UsageError);
}

TEST_CASE("PNG round trip and the blank-image check", "[gui]") {
  Image image{.width = 8, .height = 4};
  image.rgb.assign(8 * 4 * 3, 0);
  for (int x = 4; x < 8; ++x)
    for (int y = 0; y < 4; ++y)
      image.rgb[(y * 8 + x) * 3] = 255;  // right half red
  const std::string path = temp_path("roundtrip.png");
  write_png(path, image);
  const Image back = read_png(path);
  CHECK(back.width == 8);
  CHECK(back.height == 4);
  CHECK(back.rgb == image.rgb);
  CHECK(distinct_colours(back, 0, 0, 4, 4) == 1);
  CHECK(distinct_colours(back, 0, 0, 8, 4) == 2);
  CHECK(distinct_colours(back, -5, -5, 100, 100) == 2);
  std::filesystem::remove(path);
  CHECK_THROWS_AS(read_png(path), DataError);
  // A write that falls short (a full disk: /dev/full) is an error, never "wrote".
  CHECK_THROWS_WITH(write_png("/dev/full", image), Catch::Contains("No space left"));
}

TEST_CASE("dsgd-gui --help states the window's own defaults, not dsgd train's", "[gui]") {
  std::string help;
  try {
    parse_gui_options({"--help"});
  } catch (const HelpRequested& h) {
    help = h.text;
  }
  CHECK_THAT(help, Catch::StartsWith("dsgd-gui: ") && Catch::Contains("Usage: dsgd-gui"));
  CHECK_THAT(help, Catch::Contains("(default 2 ms)") && Catch::Contains("(default 1 Gbit/s)") &&
                       Catch::Contains("default 300 steps"));
  CHECK_THAT(help, !Catch::Contains("(default 0)") && !Catch::Contains("default 5 epochs"));
}
