// Where the time goes (gui/model/time_breakdown.h): a hand-made training step on 3 ranks with
// a naive all_reduce over 1 ms links, rank 2 computing four times as long, so every figure is
// known exactly: its compute, the others' waiting for it, each rank's 2 ms on the wire, and
// the alpha-beta prediction (core/comm/cost_model.h, the oracle). Then a real simulated run
// with a straggler, in model time, shows the same story.
#include <catch2/catch.hpp>

#include <vector>

#include "core/comm/collectives.h"
#include "core/comm/cost_model.h"
#include "gui/model/snapshot.h"
#include "gui/model/time_breakdown.h"
#include "gui_runs.h"

using namespace dsgd;
using namespace dsgd::gui;

namespace {

constexpr double kMs = 1e-3;
constexpr int kTag = collective_tag::kAllReduceNaive;

struct Script {
  std::vector<Event> events;
  void at(double ms, EventKind kind, int rank, const char* op = "", int peer = -1,
          uint64_t bytes = 0) {
    events.push_back({.kind = kind,
                      .rank = rank,
                      .peer = peer,
                      .tag = peer >= 0 ? kTag : 0,
                      .bytes = bytes,
                      .seq = kind == EventKind::step_begin || kind == EventKind::step_end ? 1u : 0u,
                      .model_s = ms * kMs,
                      .op = op});
  }
  // A message src -> dst sent at `ms`, received 1 ms later (the link's latency).
  void message(double ms, int src, int dst) {
    at(ms, EventKind::send_begin, src, "send", dst, 12);
    at(ms + 1, EventKind::recv_end, dst, "recv", src, 12);
  }
};

// Step 1: forward/backward (rank 2: 40 ms, the others 10 ms), a naive all_reduce of 3 floats
// (ranks 1 and 2 send to rank 0, which sends the sum back once both arrived), a 1 ms update.
std::vector<Event> straggler_step() {
  Script s;
  const double compute_end[] = {10, 10, 40}, all_reduce_end[] = {41, 42, 42};
  for (int r = 0; r < 3; ++r) {
    s.at(0, EventKind::step_begin, r, "step");
    s.at(0, EventKind::compute_begin, r, "forward_backward");
    s.at(compute_end[r], EventKind::compute_end, r, "forward_backward");
    s.at(compute_end[r], EventKind::collective_begin, r, "all_reduce", -1, 12);
  }
  s.message(10, 1, 0);
  s.message(40, 2, 0);
  s.message(41, 0, 1);
  s.message(41, 0, 2);
  for (int r = 0; r < 3; ++r) {
    const double end = all_reduce_end[r];
    s.at(end, EventKind::collective_end, r, "all_reduce");
    s.at(end, EventKind::compute_begin, r, "update");
    s.at(end + 1, EventKind::compute_end, r, "update");
    s.at(end + 1, EventKind::step_end, r, "step");
  }
  return s.events;
}

Snapshot snapshot_of(const std::vector<Event>& events, double now_s = -1) {
  SnapshotInputs in{.world = 3, .time_base = TimeBase::model, .now_s = now_s};
  in.links.assign(9, LinkView{.latency_s = 1 * kMs});
  return build_snapshot(events, in);
}

}  // namespace

TEST_CASE("a straggler's compute shows as the others' waiting, against alpha-beta", "[gui]") {
  const Snapshot s = snapshot_of(straggler_step());
  CHECK(breakdown_steps(s) == std::vector<int64_t>{1});
  CHECK(latest_complete_step(s) == 1);
  const StepTime t = step_time(s, 1);
  CHECK(t.complete);
  REQUIRE(t.ranks.size() == 3);
  struct Expected {
    double compute, transfer, waiting;
  };
  // Rank 0 waits from 11 ms (rank 1's message in) to 40 ms (rank 2 sends); rank 1 from 11 to
  // 41 ms; the straggler waits for nothing. Each has 2 ms of its messages on the wire.
  const Expected expected[] = {{11, 2, 29}, {11, 2, 30}, {41, 2, 0}};
  for (int r = 0; r < 3; ++r) {
    INFO("rank " << r);
    CHECK(t.ranks[r].seen);
    CHECK(t.ranks[r].compute_s == Approx(expected[r].compute * kMs));
    CHECK(t.ranks[r].transfer_s == Approx(expected[r].transfer * kMs));
    CHECK(t.ranks[r].waiting_s == Approx(expected[r].waiting * kMs).margin(1e-12));
    CHECK(t.ranks[r].other_s == Approx(0).margin(1e-12));
  }
  CHECK(t.ranks[0].total_s() == Approx(42 * kMs));
  // The prediction: the naive all_reduce's cost on a 1 ms, unlimited link (2 latencies).
  CHECK(std::string(t.collective) == "all_reduce naive");
  CHECK(t.bytes == 12);
  CHECK(t.collectives == 1);
  CHECK(t.alpha_s == 1 * kMs);
  CHECK(t.bandwidth_Bps == 0);
  const double oracle =
      collective_cost(CollectiveOp::all_reduce, Algorithm::naive, 3, 12).predict_s(1 * kMs, 0);
  CHECK(t.predicted_s == Approx(oracle));
  CHECK(t.collective_predicted_s == Approx(2 * kMs));
  CHECK(t.formula == "2 * (a + S/B)");  // the formula, without its note

  const StepSummary sum = summarize(t);
  CHECK(sum.straggler == 2);
  CHECK(sum.compute_ratio == Approx(41.0 / 11));
  CHECK(t.ranks[sum.slowest].total_s() == Approx(43 * kMs));  // rank 1 or 2
  // 1.5 times as long, but by less than a tenth of a long step: not worth a word.
  StepTime close = t;
  close.ranks[2].compute_s = 17 * kMs;
  close.ranks[0].other_s = 60 * kMs;  // rank 0 evaluates for 60 ms
  CHECK(summarize(close).straggler == -1);
  close.ranks[0].other_s = 0;
  CHECK(summarize(close).straggler == 2);
}

TEST_CASE("a step still running is shown up to now, and not as finished", "[gui]") {
  const Snapshot s = snapshot_of(straggler_step(), 20 * kMs);
  CHECK(latest_complete_step(s) == 0);
  const StepTime t = step_time(s, 1);
  CHECK_FALSE(t.complete);
  CHECK(t.ranks[2].compute_s == Approx(20 * kMs));  // the straggler still computes
  CHECK(t.ranks[0].compute_s == Approx(10 * kMs));
  CHECK(t.ranks[0].transfer_s == Approx(1 * kMs));  // rank 1's message, 10 to 11 ms
  CHECK(t.ranks[0].waiting_s == Approx(9 * kMs));
  // No step: nothing seen.
  const StepTime none = step_time(s, 7);
  for (const RankTime& r : none.ranks)
    CHECK_FALSE(r.seen);
  CHECK(summarize(none).slowest == -1);
}

TEST_CASE("a simulated straggler makes the other ranks wait, in model time", "[gui]") {
  EventBuffer buffer;
  test::train_straggler(buffer, 3);
  SnapshotInputs in{.world = 4, .time_base = TimeBase::model};
  in.links.assign(16, LinkView{.latency_s = 1e-3, .bandwidth_Bps = 125e6});
  const Snapshot s = build_snapshot(buffer.snapshot(), in);
  CHECK(latest_complete_step(s) == 3);
  const StepTime t = step_time(s, 2);
  const StepSummary sum = summarize(t);
  CHECK(sum.straggler == 2);
  CHECK(sum.compute_ratio == Approx(4).epsilon(0.05));
  for (int r : {0, 1, 3}) {
    INFO("rank " << r);
    CHECK(t.ranks[r].waiting_s > t.ranks[2].waiting_s + 0.5 * t.ranks[2].compute_s);
    CHECK(t.ranks[r].transfer_s > 0);
  }
  CHECK(std::string(t.collective) == "all_reduce ring");
  CHECK(t.predicted_s > 0);
}
