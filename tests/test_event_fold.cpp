// The event fold (core/event_fold.h) and the schedules it labels messages with: real
// all_reduces on simulated nodes, whose payloads say which ranks' values each message
// carries (rank r contributes 2^r, so a sum's bits name its contributors exactly), checked
// against the phase, step, chunk, segment and contributions the fold names; and hand-made
// event lists for pairing, open slices and per-rank state.
#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/comm/chunks.h"
#include "core/comm/collective_tags.h"
#include "core/comm/collectives.h"
#include "core/comm/halving_doubling_schedule.h"
#include "core/comm/ring_schedule.h"
#include "core/event_fold.h"
#include "sim/cluster.h"

using namespace dsgd;

namespace {

// Rank r's element i: 2^r in the low bits (R <= 6 ranks: below 64), and for the ring the
// piece of the buffer it lies in (chunk * segments + segment) above them, times 64.
std::vector<float> ring_input(int rank, size_t count, int world) {
  const RingSchedule ring = RingSchedule::of(count, world);
  const Chunks chunks{count, world};
  std::vector<float> data(count);
  for (int c = 0; c < world; ++c) {
    const Chunks segments{chunks.size(c), ring.segments};
    for (int k = 0; k < ring.segments; ++k)
      for (size_t i = segments.offset(k); i < segments.offset(k + 1); ++i)
        data[chunks.offset(c) + i] = static_cast<float>((1 << rank) + 64 * (c * ring.segments + k));
  }
  return data;
}

std::vector<Event> run_all_reduce(int world, Algorithm algorithm, size_t count,
                                  bool ring_input_values) {
  EventBuffer buffer;
  sim::ClusterOptions options{.nodes = world};
  options.events = &buffer;
  sim::run_cluster(options, [&](Communicator& comm) {
    std::vector<float> data = ring_input_values
                                  ? ring_input(comm.rank(), count, world)
                                  : std::vector<float>(count, static_cast<float>(1 << comm.rank()));
    all_reduce(comm, data, ReduceOp::SUM, {.algorithm = algorithm});
  });
  return buffer.snapshot();
}

EventFold fold_of(const std::vector<Event>& events, int world) {
  EventFold fold(world);
  for (const Event& e : events)
    fold.add(e);
  return fold;
}

// The ranks whose 2^r a payload value sums (the low six bits).
int contributors(float value) {
  return static_cast<int>(value) & 63;
}

}  // namespace

TEST_CASE("the ring schedule follows allreduce_ring step by step", "[fold]") {
  // An independent replay of allreduce_ring.cpp on sets of contributors.
  for (int world = 1; world <= 8; ++world) {
    const RingSchedule ring{.world = world};
    std::vector<std::vector<std::set<int>>> have(world, std::vector<std::set<int>>(world));
    for (int r = 0; r < world; ++r)
      for (int c = 0; c < world; ++c)
        have[r][c] = {r};
    for (int r = 0; r < world; ++r)
      for (int c = 0; c < world; ++c)
        CHECK(ring.contributions(r, c, 0) == 1);
    for (int s = 0; s < ring.steps(); ++s) {
      auto before = have;
      for (int r = 0; r < world; ++r) {
        const int left = (r - 1 + world) % world;
        const int sent_chunk = ring.sent_chunk(left, s);
        CHECK(ring.received_chunk(r, s) == sent_chunk);
        CHECK(static_cast<int>(before[left][sent_chunk].size()) == ring.sent_contributions(s));
        if (s < world - 1) {
          const int c = ((r - s - 1) % world + world) % world;
          CHECK(c == sent_chunk);
          have[r][c].insert(before[left][c].begin(), before[left][c].end());
        } else {
          const int c = ((r - (s - world + 1)) % world + world) % world;
          CHECK(c == sent_chunk);
          have[r][c] = before[left][c];
        }
      }
      for (int r = 0; r < world; ++r)
        for (int c = 0; c < world; ++c) {
          INFO("world " << world << " step " << s << " rank " << r << " chunk " << c);
          CHECK(ring.contributions(r, c, s + 1) == static_cast<int>(have[r][c].size()));
        }
    }
    for (int r = 0; r < world; ++r)
      for (int c = 0; c < world; ++c)
        CHECK(ring.contributions(r, c, ring.steps()) == world);
  }
  // Segments: a chunk of more than kRingSegmentFloats travels as several messages.
  CHECK(RingSchedule::of(3 * kRingSegmentFloats, 3).segments == 1);
  CHECK(RingSchedule::of(3 * kRingSegmentFloats + 3, 3).segments == 2);
  CHECK(RingSchedule::of(0, 3).segments == 1);
}

TEST_CASE("ring all_reduce messages carry the chunk, segment and ranks the fold names",
          "[fold][ring]") {
  struct Case {
    int world;
    size_t count;
  };
  std::vector<Case> cases;
  for (int world = 2; world <= 6; ++world)
    cases.push_back({world, static_cast<size_t>(2 * world + 1)});  // uneven chunks
  cases.push_back({3, kRingSegmentFloats * 7 / 2});                // 2 segments per chunk
  for (const Case& c : cases) {
    const std::vector<Event> events = run_all_reduce(c.world, Algorithm::ring, c.count, true);
    const EventFold fold = fold_of(events, c.world);
    const RingSchedule ring = RingSchedule::of(c.count, c.world);
    const Chunks chunks{c.count, c.world};
    INFO("world " << c.world << ", " << c.count << " floats, " << ring.segments << " segments");
    CHECK(ring.segments == (c.count > kRingSegmentFloats * c.world ? 2 : 1));
    REQUIRE(fold.messages().size() == static_cast<size_t>(c.world * ring.messages()));
    std::map<int, int> sent;  // rank -> messages so far
    for (const FoldMessage& m : fold.messages()) {
      const MessagePhase p = fold.phase(m);
      const int n = sent[m.src]++;
      INFO(m.src << " -> " << m.dst << " #" << m.k << " (its message " << n << ")");
      REQUIRE(p.collective != nullptr);
      CHECK(std::string(p.collective->label) == "all_reduce ring");
      CHECK(m.dst == (m.src + 1) % c.world);
      CHECK(m.has_arrived);
      CHECK(m.ordinal == n);
      CHECK(p.steps == ring.steps());
      CHECK(p.step == n / ring.segments);
      CHECK(p.segment == n % ring.segments);
      CHECK(p.segments == ring.segments);
      CHECK(p.phase == (p.step < c.world - 1 ? Phase::reduce_scatter : Phase::all_gather));
      CHECK(p.phase_steps == c.world - 1);  // R-1 steps of each phase
      CHECK(p.phase_step == p.step % (c.world - 1));
      CHECK(p.chunk == ring.sent_chunk(m.src, p.step));
      CHECK(m.bytes == Chunks{chunks.size(p.chunk), ring.segments}.size(p.segment) * sizeof(float));
      // The payload: which piece of the buffer, and whose values.
      REQUIRE(m.preview_count > 0);
      const int value = static_cast<int>(m.preview[0]);
      const int ranks = contributors(m.preview[0]);
      CHECK(std::popcount(static_cast<unsigned>(ranks)) == p.contributions);
      CHECK((value >> 6) == p.contributions * (p.chunk * ring.segments + p.segment));
      for (int j = 0; j < p.contributions; ++j)  // the consecutive ranks src, src-1, ...
        CHECK((ranks >> ((m.src - j + c.world) % c.world) & 1) == 1);
    }
    for (int r = 0; r < c.world; ++r) {
      CHECK(fold.all_reduce_algorithm(r) == Algorithm::ring);
      CHECK(fold.all_reduce_contributions(r, Algorithm::ring) ==
            std::vector<int>(c.world, c.world));
    }
  }
}

TEST_CASE("a rank's ring chunks fill as its receives complete whole steps", "[fold][ring]") {
  const int world = 3;
  const size_t count = kRingSegmentFloats * 7 / 2;  // 2 segments per chunk
  const std::vector<Event> events = run_all_reduce(world, Algorithm::ring, count, true);
  const RingSchedule ring = RingSchedule::of(count, world);
  const int tag = collective_tag::kAllReduceRing;
  for (int r = 0; r < world; ++r) {
    EventFold fold(world);
    int received = 0;
    CHECK(fold.all_reduce_contributions(r, Algorithm::ring) == std::vector<int>(world, 1));
    for (const Event& e : events) {
      if (e.rank != r) continue;
      fold.add(e);
      if (e.kind == EventKind::collective_end) break;  // then every chunk is complete
      if (e.kind != EventKind::recv_end || e.tag != tag) continue;
      ++received;
      std::vector<int> want(world);
      for (int c = 0; c < world; ++c)
        want[c] = ring.contributions(r, c, received / ring.segments);
      INFO("rank " << r << " after " << received << " receives");
      CHECK(fold.all_reduce_contributions(r, Algorithm::ring) == want);
      CHECK(fold.rank(r).in_collective);
    }
    CHECK(received == ring.messages());
    CHECK(fold.all_reduce_contributions(r, Algorithm::ring) == std::vector<int>(world, world));
    CHECK_FALSE(fold.rank(r).in_collective);
  }
}

TEST_CASE(
    "halving_doubling, recursive_doubling, tree and naive messages are labelled with "
    "their own algorithm",
    "[fold]") {
  struct Case {
    int world;
    Algorithm algorithm;
    std::vector<Phase> phases;  // in the order a rank meets them
  };
  const std::vector<Case> cases = {
      {5,
       Algorithm::halving_doubling,
       {Phase::fold, Phase::reduce_scatter, Phase::all_gather, Phase::unfold}},
      {8, Algorithm::halving_doubling, {Phase::reduce_scatter, Phase::all_gather}},
      {6, Algorithm::recursive_doubling, {Phase::fold, Phase::exchange, Phase::unfold}},
      {4, Algorithm::recursive_doubling, {Phase::exchange}},
      {5, Algorithm::tree, {Phase::reduce, Phase::broadcast}},
      {4, Algorithm::naive, {Phase::to_root, Phase::from_root}},
  };
  for (const Case& c : cases) {
    INFO(to_string(c.algorithm) << " on " << c.world);
    const std::vector<Event> events = run_all_reduce(c.world, c.algorithm, 2 * c.world + 1, false);
    const EventFold fold = fold_of(events, c.world);
    const CollectiveTag* tag = find_collective_tag(CollectiveOp::all_reduce, c.algorithm);
    REQUIRE(tag != nullptr);
    REQUIRE_FALSE(fold.messages().empty());
    std::set<Phase> seen;
    std::map<int, int> last_step, last_phase;  // per sender
    for (const FoldMessage& m : fold.messages()) {
      const MessagePhase p = fold.phase(m);
      INFO(m.src << " -> " << m.dst << " " << to_string(p.phase) << " step " << p.step);
      CHECK(p.collective == tag);
      CHECK(std::string(p.label(m.tag)) == std::string("all_reduce ") + to_string(c.algorithm));
      CHECK(p.chunk == -1);  // no ring chunks here
      const auto order = std::find(c.phases.begin(), c.phases.end(), p.phase);
      REQUIRE(order != c.phases.end());
      seen.insert(p.phase);
      CHECK(p.step >= 0);
      CHECK(p.step < p.steps);
      CHECK(p.phase_step >= 0);
      CHECK(p.phase_step < p.phase_steps);
      CHECK(p.phase_step <= p.step);
      // A rank's messages go forward through the phases and steps.
      const int phase_index = static_cast<int>(order - c.phases.begin());
      if (last_step.count(m.src)) {
        CHECK(phase_index >= last_phase[m.src]);
        CHECK(p.step >= last_step[m.src]);
      }
      last_step[m.src] = p.step;
      last_phase[m.src] = phase_index;
      // Whose values it carries, from its payload (every element of rank r is 2^r).
      REQUIRE(m.preview_count > 0);
      CHECK(std::popcount(static_cast<unsigned>(m.preview[0])) == p.contributions);
    }
    CHECK(seen.size() == c.phases.size());
    for (int r = 0; r < c.world; ++r) {
      CHECK(fold.all_reduce_algorithm(r) == c.algorithm);
      // Not a ring: one count for the whole buffer, complete once it ended.
      CHECK(fold.all_reduce_contributions(r, Algorithm::ring) == std::vector<int>{c.world});
    }
  }
  // The fold's ranks agree with the algorithm's: 5 = 4 + 1, rank 0 folds into rank 1.
  const HalvingDoubling h = HalvingDoubling::of(5);
  CHECK(h.pow2 == 4);
  CHECK(h.extra == 1);
  CHECK(h.core_rank(0) == -1);
  CHECK(h.core_rank(1) == 0);
  CHECK(h.real_rank(0) == 1);
  CHECK(h.core_rank(4) == 3);
  CHECK(h.steps() == 6);
}

TEST_CASE("a collective's slice names the algorithm its messages ran, open or closed", "[fold]") {
  for (const Algorithm algorithm :
       {Algorithm::ring, Algorithm::halving_doubling, Algorithm::tree, Algorithm::naive}) {
    INFO(to_string(algorithm));
    const std::vector<Event> events = run_all_reduce(4, algorithm, 9, false);
    const std::string label = find_collective_tag(CollectiveOp::all_reduce, algorithm)->label;
    const EventFold fold = fold_of(events, 4);
    int closed = 0;
    for (const FoldSlice& sl : fold.slices())
      if (sl.kind == SliceKind::collective) {
        CHECK(std::string(sl.name) == "all_reduce");
        CHECK(std::string(sl.label) == label);
        ++closed;
      }
    CHECK(closed == 4);
    // Cut after rank 0's first send: its all_reduce is open and already named; before that
    // send it has no label yet.
    EventFold partial(4);
    bool sent = false;
    for (const Event& e : events) {
      if (e.rank != 0) continue;
      if (e.kind == EventKind::collective_begin) {
        partial.add(e);
        const std::vector<FoldSlice> open = partial.open_slices(0);
        REQUIRE(open.size() == 1);
        CHECK(std::string(open[0].label).empty());
        continue;
      }
      partial.add(e);
      if (e.kind == EventKind::send_begin) {
        sent = true;
        break;
      }
    }
    REQUIRE(sent);
    const std::vector<FoldSlice> open = partial.open_slices(0);
    REQUIRE(open.size() == 1);
    CHECK(open[0].kind == SliceKind::collective);
    CHECK(std::string(open[0].label) == label);
  }
}

TEST_CASE("user messages are p2p, other collectives name their own phases", "[fold]") {
  EventBuffer buffer;
  sim::run_cluster({.nodes = 4, .events = &buffer}, [](Communicator& comm) {
    std::vector<float> v(4, static_cast<float>(comm.rank()));
    comm.send(v, (comm.rank() + 1) % 4, 5);
    comm.recv(v, (comm.rank() + 3) % 4, 5);
    broadcast(comm, v, 2);
    barrier(comm);
  });
  const EventFold fold = fold_of(buffer.snapshot(), 4);
  std::map<std::string, int> phases;
  for (const FoldMessage& m : fold.messages()) {
    const MessagePhase p = fold.phase(m);
    if (m.tag == 5) {
      CHECK(p.collective == nullptr);
      CHECK(p.phase == Phase::p2p);
      CHECK(std::string(p.label(m.tag)) == "p2p");
      CHECK(m.ordinal == -1);
      continue;
    }
    REQUIRE(p.collective != nullptr);
    ++phases[std::string(p.collective->label) + " " + to_string(p.phase)];
    CHECK(p.step >= 0);
    CHECK(p.step < p.steps);
  }
  CHECK(phases["broadcast broadcast"] == 3);
  CHECK(phases["barrier round"] == 8);  // 4 ranks, 2 rounds
  CHECK(std::string(tag_label(collective_tag::kAllReduceHalvingDoubling)) ==
        "all_reduce halving_doubling");
  CHECK(std::string(tag_label(3)) == "p2p");
  CHECK(std::string(tag_label(kCollectiveTagBase + 99)) == "collective");
}

TEST_CASE("the fold pairs messages in either order and keeps what is open", "[fold]") {
  // Rank 1's receive is fed before rank 0's send (a trace fed rank by rank in reverse).
  const std::vector<Event> events = {
      {.kind = EventKind::recv_begin, .rank = 1, .peer = -1, .tag = 3, .wall_s = 1.0},
      {.kind = EventKind::recv_end, .rank = 1, .peer = 0, .tag = 3, .bytes = 8, .wall_s = 2.0},
      {.kind = EventKind::step_begin, .rank = 1, .seq = 4, .wall_s = 2.5},
      {.kind = EventKind::compute_begin, .rank = 1, .wall_s = 3.0, .op = "forward_backward"},
      {.kind = EventKind::recv_begin, .rank = 1, .peer = 0, .tag = 9, .wall_s = 3.5},
      {.kind = EventKind::send_begin, .rank = 0, .peer = 1, .tag = 3, .bytes = 8, .wall_s = 0.5},
      {.kind = EventKind::send_end, .rank = 0, .peer = 1, .tag = 3, .wall_s = 0.7},
      {.kind = EventKind::send_begin, .rank = 0, .peer = 1, .tag = 3, .bytes = 8, .wall_s = 0.8},
      {.kind = EventKind::note, .rank = 0, .wall_s = 0.9, .op = "peer lost"},
  };
  EventFold fold;
  for (const Event& e : events)
    fold.add(e);
  CHECK(fold.world() == 2);
  REQUIRE(fold.messages().size() == 2);
  const FoldMessage& first = fold.messages()[0];
  CHECK(first.k == 0);
  CHECK(first.has_arrived);
  CHECK(first.arrived.wall_s == 2.0);
  CHECK(first.sent.wall_s == 0.5);
  CHECK_FALSE(fold.messages()[1].has_arrived);
  CHECK(fold.messages()[1].k == 1);
  // Slices: rank 1's receive (posted at 1.0), rank 0's two sends (one ended), the note.
  std::map<SliceKind, std::vector<FoldSlice>> by_kind;
  for (const FoldSlice& s : fold.slices())
    by_kind[s.kind].push_back(s);
  REQUIRE(by_kind[SliceKind::recv].size() == 1);
  const FoldSlice& recv = by_kind[SliceKind::recv][0];
  CHECK(recv.begin.wall_s == 1.0);
  CHECK(recv.end.wall_s == 2.0);
  CHECK(recv.message == 0);
  CHECK(recv.begin.event == 0);
  CHECK(recv.end.event == 1);
  REQUIRE(by_kind[SliceKind::send].size() == 2);
  CHECK(by_kind[SliceKind::send][0].ended);
  CHECK(by_kind[SliceKind::send][0].end.wall_s == 0.7);
  CHECK_FALSE(by_kind[SliceKind::send][1].ended);
  CHECK(by_kind[SliceKind::note].size() == 1);
  // Still open on rank 1: step 4, forward_backward, the receive of tag 9.
  const std::vector<FoldSlice> open = fold.open_slices(1);
  REQUIRE(open.size() == 3);
  CHECK(open[0].kind == SliceKind::step);
  CHECK(open[0].seq == 4);
  CHECK(open[1].kind == SliceKind::compute);
  CHECK(std::string(open[1].name) == "forward_backward");
  CHECK(open[2].kind == SliceKind::recv);
  CHECK(open[2].tag == 9);
  CHECK(fold.rank(1).step == 4);
  CHECK(fold.rank(1).computing);
  CHECK_FALSE(fold.rank(0).computing);
  CHECK(fold.rank(1).last.wall_s == 3.5);
  // A receive past the time cursor only completes its message.
  fold.add_arrival(
      {.kind = EventKind::recv_end, .rank = 1, .peer = 0, .tag = 3, .bytes = 8, .wall_s = 9.0});
  CHECK(fold.messages()[1].has_arrived);
  CHECK(fold.messages()[1].arrived.wall_s == 9.0);
  CHECK(fold.messages()[1].recv_slice == -1);
  CHECK(fold.slices().size() == 4);
}

TEST_CASE("a message folded after its receiver's round ended was abandoned, a later round's not",
          "[fold][elastic]") {
  // A watched elastic run: each process streams its own events, so rank 0's note that its
  // round 0 ended comes before the last send rank 1 made to it in that round.
  const uint64_t round1 = uint64_t{1} << kRoundShift;
  const std::vector<Event> events = {
      {.kind = EventKind::note, .rank = 0, .seq = 0, .wall_s = 1.0, .op = kRoundEndNote},
      {.kind = EventKind::send_begin,
       .rank = 1,
       .peer = 0,
       .tag = 3,
       .bytes = 8,
       .seq = 7,
       .wall_s = 0.9},
      {.kind = EventKind::send_begin,
       .rank = 2,
       .peer = 0,
       .tag = 3,
       .bytes = 8,
       .seq = round1,
       .wall_s = 1.5},
      {.kind = EventKind::send_begin,
       .rank = 0,
       .peer = 2,
       .tag = 3,
       .bytes = 8,
       .seq = round1,
       .wall_s = 1.6},
      {.kind = EventKind::recv_end,
       .rank = 2,
       .peer = 0,
       .tag = 3,
       .bytes = 8,
       .seq = round1,
       .wall_s = 1.7},
  };
  EventFold fold;
  for (const Event& e : events)
    fold.add(e);
  REQUIRE(fold.messages().size() == 3);
  CHECK(fold.messages()[0].abandoned);        // round 0, to a rank whose round 0 had ended
  CHECK_FALSE(fold.messages()[1].abandoned);  // round 1: in flight
  CHECK_FALSE(fold.messages()[1].has_arrived);
  CHECK_FALSE(fold.messages()[2].abandoned);  // round 1, received
  CHECK(fold.messages()[2].has_arrived);
}
