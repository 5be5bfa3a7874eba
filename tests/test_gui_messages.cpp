// The message log's words and the all_reduce demo's annotations (gui/model/message_text.h,
// gui/model/allreduce_demo.h), checked on the messages of real simulated all_reduces: every
// ring message is a step k/(R-1) of reduce-scatter or all-gather, the tree's go up and down
// D levels, halving-doubling folds, halves, doubles and unfolds; the demo's caption follows
// the messages in flight, and its vectors before and after are each rank's input and the sum.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>

#include "core/comm/collectives.h"
#include "gui/model/allreduce_demo.h"
#include "gui/model/layout.h"
#include "gui/model/message_text.h"
#include "gui/model/snapshot.h"
#include "gui_runs.h"

using namespace dsgd;
using namespace dsgd::gui;
using dsgd::test::demo_events;

namespace {

Snapshot demo_snapshot(int world, Algorithm algorithm, int elements, double now_s = -1) {
  const std::vector<Event> events = demo_events(world, algorithm, elements);
  return build_snapshot(events, {.world = world,
                                 .time_base = TimeBase::model,
                                 .now_s = now_s,
                                 .algorithm = algorithm,
                                 .demo_elements = elements});
}

// Per sender: the (phase, index) pairs its messages carried, and each phase's step count.
struct Positions {
  std::map<int, std::set<std::pair<Phase, int>>> by_sender;
  std::map<Phase, std::set<int>> counts;
};
Positions positions_of(const Snapshot& s) {
  Positions p;
  for (const MessageView& m : s.messages) {
    const PhasePosition pos = phase_position(m);
    p.by_sender[m.src].insert({pos.phase, pos.index});
    p.counts[pos.phase].insert(pos.count);
  }
  return p;
}

}  // namespace

TEST_CASE("ring messages are steps 1..R-1 of reduce-scatter, then of all-gather", "[gui]") {
  const int world = 8;
  const Snapshot s = demo_snapshot(world, Algorithm::ring, 2 * world);
  const Positions p = positions_of(s);
  CHECK(p.counts.at(Phase::reduce_scatter) == std::set<int>{world - 1});
  CHECK(p.counts.at(Phase::all_gather) == std::set<int>{world - 1});
  for (int r = 0; r < world; ++r) {
    std::set<std::pair<Phase, int>> expected;
    for (int k = 1; k < world; ++k) {
      expected.insert({Phase::reduce_scatter, k});
      expected.insert({Phase::all_gather, k});
    }
    CHECK(p.by_sender.at(r) == expected);
  }
  // The words: "reduce-scatter 3/7, chunk 5" for the third step.
  for (const MessageView& m : s.messages) {
    const PhasePosition pos = phase_position(m);
    const std::string phase = pos.phase == Phase::reduce_scatter ? "reduce-scatter" : "all-gather";
    CHECK(phase_text(m, world) == phase + " " + std::to_string(pos.index) + "/7");
    CHECK(phase_and_chunk_text(m, world) ==
          phase_text(m, world) + ", chunk " + std::to_string(m.chunk));
    CHECK(tag_column_text(m) == "all_reduce ring");
    CHECK(std::string(phase_hint(m)).find("chunk") != std::string::npos);
  }
}

TEST_CASE("tree messages go up D levels and down D levels", "[gui]") {
  const int world = 8;  // D = 3
  const Snapshot s = demo_snapshot(world, Algorithm::tree, 4);
  const Positions p = positions_of(s);
  CHECK(p.counts.at(Phase::reduce) == std::set<int>{3});
  CHECK(p.counts.at(Phase::broadcast) == std::set<int>{3});
  std::set<std::string> texts;
  for (const MessageView& m : s.messages)
    texts.insert(phase_text(m, world));
  CHECK(texts == std::set<std::string>{"reduce up, level 1/3", "reduce up, level 2/3",
                                       "reduce up, level 3/3", "broadcast down, level 1/3",
                                       "broadcast down, level 2/3", "broadcast down, level 3/3"});
  // Rank 4 sends up at level 3 (to the root), the leaves at level 1.
  for (const MessageView& m : s.messages)
    if (m.phase == Phase::reduce && m.src == 4) CHECK(phase_position(m).index == 3);
}

TEST_CASE("halving-doubling folds, halves, doubles and unfolds", "[gui]") {
  const int world = 6;  // P = 4: two halving and two doubling steps, ranks 0 and 2 fold
  const Snapshot s = demo_snapshot(world, Algorithm::halving_doubling, 12);
  std::set<std::string> texts;
  for (const MessageView& m : s.messages)
    texts.insert(phase_text(m, world));
  CHECK(texts == std::set<std::string>{"fold", "halving (reduce-scatter) 1/2",
                                       "halving (reduce-scatter) 2/2", "doubling (all-gather) 1/2",
                                       "doubling (all-gather) 2/2", "unfold"});
}

TEST_CASE("naive messages go to the root and back, and a program's own message is its tag",
          "[gui]") {
  const Snapshot s = demo_snapshot(4, Algorithm::naive, 4);
  for (const MessageView& m : s.messages)
    CHECK(phase_text(m, 4) == (m.src == 0 ? "from root" : "to root"));
  MessageView own{.src = 0, .dst = 1, .tag = 5, .bytes = 40, .op = "p2p"};
  CHECK(tag_column_text(own) == "tag 5");
  CHECK(phase_text(own, 4).empty());
  CHECK(std::string(phase_hint(own)).empty());
  CHECK(preview_text(own).empty());
  own.preview_count = 3;
  own.preview[0] = 1, own.preview[1] = -2.5f, own.preview[2] = 3;
  CHECK(preview_text(own) == "1, -2.5, 3, ...");  // 10 floats, 3 shown
  own.bytes = 12;
  CHECK(preview_text(own) == "1, -2.5, 3");
}

TEST_CASE("the demo's caption follows the messages in flight, then says it is done", "[gui]") {
  const int world = 4, elements = 8;
  const Snapshot end = demo_snapshot(world, Algorithm::ring, elements);
  const DemoStage done = demo_stage(end);
  CHECK(done.done);
  CHECK(done.in_flight == 0);
  CHECK(demo_caption(end).what == "all_reduce ring: done, every rank holds the sum");

  // Half way (model time): the caption names the earliest step still in flight.
  const Snapshot mid =
      demo_snapshot(world, Algorithm::ring, elements, (end.begin_s + end.end_s) / 2);
  const DemoStage stage = demo_stage(mid);
  REQUIRE(stage.in_flight > 0);
  CHECK(stage.in_flight == static_cast<int>(mid.in_flight.size()));
  CHECK_FALSE(stage.done);
  const MessageView& shown = mid.messages[stage.message];
  for (int i : mid.in_flight)
    CHECK(mid.messages[i].step >= shown.step);
  const DemoCaption caption = demo_caption(mid);
  CHECK(caption.what == "all_reduce ring: " + phase_text(shown, world) + " (" +
                            std::to_string(stage.in_flight) + " in flight)");
  CHECK(caption.hint == phase_hint(shown));

  // Before the first message.
  const Snapshot start;
  CHECK(demo_stage(start).message == -1);
  CHECK(demo_caption(start).what == "all_reduce: waiting for the first message");
}

TEST_CASE("the demo shows each rank's vector before, now, and after: the sum and the average",
          "[gui]") {
  const int world = 5, elements = 10;
  const Snapshot s = demo_snapshot(world, Algorithm::ring, elements);
  CHECK(demo_values(s, DemoValues::now) == s.gradients.values);
  const auto before = demo_values(s, DemoValues::before);
  const auto sum = demo_values(s, DemoValues::sum);
  const auto average = demo_values(s, DemoValues::average);
  for (int r = 0; r < world; ++r)
    for (int i = 0; i < elements; ++i) {
      CHECK(before[r][i] == demo_value(r, i));
      float total = 0;
      for (int q = 0; q < world; ++q)
        total += demo_value(q, i);
      CHECK(sum[r][i] == total);
      CHECK(average[r][i] == Approx(total / world));
    }
}
