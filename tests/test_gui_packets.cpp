// The topology's packets and faults as the model places them (gui/model/packets.h,
// snapshot.h), without OpenGL: every algorithm's messages labelled from the fold, packets
// stacked on one link merged into one mark with a count, a caption that counts what is
// drawn, labels that never cover each other; links down and a partition's groups; messages
// lost and resent; a crashed rank's messages lost and the ranks holding the full sum
// counted among the living.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/comm/collectives.h"
#include "core/event_fold.h"
#include "core/io/trace.h"
#include "gui/model/layout.h"
#include "gui/model/message_text.h"
#include "gui/model/packets.h"
#include "gui/model/snapshot.h"
#include "gui/model/ui_text.h"
#include "sim/cluster.h"

using namespace dsgd;
using namespace dsgd::gui;

namespace {

std::vector<Event> all_reduce_events(int world, Algorithm algorithm, int elements,
                                     const sim::NetworkConfig& network = {}) {
  EventBuffer buffer;
  sim::ClusterOptions options{.nodes = world};
  options.network = network;
  options.events = &buffer;
  sim::run_cluster(options, [&](Communicator& comm) {
    std::vector<float> data(elements, 1.0f);
    all_reduce(comm, data, ReduceOp::SUM, {.algorithm = algorithm});
  });
  return buffer.snapshot();
}

// The ranks on a ring of radius 300 px around (400, 400), labels 8 px a character.
PacketFrame frame_for(int world) {
  PacketFrame f{.node_r = 24, .font_px = 16};
  for (const Vec2& p : layout_positions(Layout::ring, world))
    f.ranks.push_back({100 + p.x * 600, 100 + p.y * 600});
  f.text_size = [](const std::string& text) {
    return Vec2{8.0f * static_cast<float>(text.size()) + 6, 18};
  };
  return f;
}

Event send(int src, int dst, int tag, double t, uint64_t bytes = 64) {
  return {.kind = EventKind::send_begin,
          .rank = src,
          .peer = dst,
          .tag = tag,
          .bytes = bytes,
          .wall_s = t};
}

}  // namespace

TEST_CASE("every algorithm's packets are labelled with their phase and step", "[gui][packets]") {
  set_ui_chinese(false);
  const std::map<Algorithm, std::set<std::string>> expected = {
      {Algorithm::ring, {"c0", "c3", "c7"}},
      {Algorithm::tree, {"reduce 1/3", "reduce 3/3", "bcast 1/3", "bcast 3/3"}},
      {Algorithm::halving_doubling, {"rs 1/3", "rs 3/3", "ag 1/3", "ag 3/3"}},
      {Algorithm::naive, {"to root", "from root"}},
  };
  for (const auto& [algorithm, want] : expected) {
    INFO(to_string(algorithm));
    const Snapshot s = build_snapshot(all_reduce_events(8, algorithm, 64),
                                      {.world = 8, .time_base = TimeBase::model});
    std::set<std::string> labels;
    for (const MessageView& m : s.messages) {
      const std::string label = packet_label(m);
      CHECK_FALSE(label.empty());
      CHECK(label != "?");
      labels.insert(label);
    }
    for (const std::string& w : want) {
      INFO(w);
      CHECK(labels.count(w) == 1);
    }
  }
  // A user message shows its tag; in Chinese the words change, the numbers stay.
  MessageView p2p{.tag = 5};
  CHECK(packet_label(p2p) == "tag 5");
  MessageView reduce{.phase = Phase::reduce, .phase_step = 0, .phase_steps = 3};
  set_ui_chinese(true);
  CHECK(packet_label(reduce) == std::string(tr("reduce")) + " 1/3");
  CHECK(packet_label(reduce) != "reduce 1/3");
  set_ui_chinese(false);
}

TEST_CASE("packets stacked on one link become one mark with a count, and the caption agrees",
          "[gui][packets]") {
  // 16 messages 0 -> 1 at once, none received: all wait at the door, on top of each other;
  // one 2 -> 3 on its own; one from rank 3 to itself.
  std::vector<Event> events;
  for (int i = 0; i < 16; ++i)
    events.push_back(send(0, 1, collective_tag::kAllReduceRing, 1.0));
  events.push_back(send(2, 3, 7, 1.0));
  events.push_back(send(3, 3, 7, 1.0));
  SnapshotInputs in{.world = 4, .now_s = 2.0};
  in.links.assign(16, LinkView{.latency_s = 0.01});
  const Snapshot s = build_snapshot(events, in);
  REQUIRE(s.in_flight.size() == 18);
  const PacketScene scene = place_packets(s, frame_for(4));
  REQUIRE(scene.marks.size() == 2);
  CHECK(scene.in_flight == 18);
  CHECK(scene.to_itself == 1);
  CHECK(scene.in_flight_marks == 2);
  const auto stacked = std::find_if(scene.marks.begin(), scene.marks.end(),
                                    [](const PacketMark& m) { return m.count > 1; });
  REQUIRE(stacked != scene.marks.end());
  CHECK(stacked->count == 16);
  CHECK(stacked->badge == "x16");
  int messages = 0;
  for (const PacketMark& m : scene.marks)
    messages += m.count;
  CHECK(messages == 17);  // every message drawn but the one to itself
  CHECK(in_flight_caption(scene) == "18 in flight, 17 drawn as 2 (1 to itself)");

  // Direction: each mark points from its sender to its receiver.
  const PacketFrame f = frame_for(4);
  for (const PacketMark& m : scene.marks) {
    const MessageView& msg = s.messages[m.message];
    const Vec2 a = f.ranks[msg.src], b = f.ranks[msg.dst];
    const float along = (b.x - a.x) * m.dir.x + (b.y - a.y) * m.dir.y;
    CHECK(along > 0);
    CHECK(std::hypot(m.dir.x, m.dir.y) == Approx(1));
  }

  // Nothing merged, nothing to itself: the plain count.
  PacketScene plain{.in_flight = 8, .in_flight_marks = 8};
  CHECK(in_flight_caption(plain) == "8 in flight");
  plain.in_flight_marks = 5;
  CHECK(in_flight_caption(plain) == "8 in flight, drawn as 5");
  plain.lost = 3;
  CHECK(in_flight_caption(plain) == "8 in flight, drawn as 5, 3 lost");
}

TEST_CASE("packet sizes follow the font, and labels never cover each other, a rank or a packet",
          "[gui][packets]") {
  CHECK(packet_radius(64, 16, false) == Approx(8));
  CHECK(packet_radius(64, 28, false) == Approx(14));  // projector: 1.75 x the font, 1.75 x
  CHECK(packet_radius(64 << 20, 16, false) == Approx(12));
  CHECK(packet_radius(64, 16, true) < packet_radius(64, 16, false));
  // A ring all_reduce of 8 ranks at many moments: every label box apart from the others
  // and off the ranks; most marks keep theirs.
  const std::vector<Event> events = all_reduce_events(
      8, Algorithm::ring, 4096, {.link = {.latency_s = 1e-3, .bandwidth_Bps = 1e8}});
  const Snapshot whole = build_snapshot(events, {.world = 8, .time_base = TimeBase::model});
  const PacketFrame f = frame_for(8);
  int labelled = 0, marks = 0;
  for (int i = 1; i < 20; ++i) {
    SnapshotInputs in{.world = 8, .time_base = TimeBase::model};
    in.now_s = whole.begin_s + (whole.end_s - whole.begin_s) * i / 20;
    const Snapshot s = build_snapshot(events, in);
    const PacketScene scene = place_packets(s, f);
    std::vector<std::array<float, 4>> boxes;
    for (const PacketMark& m : scene.marks) {
      ++marks;
      if (m.label.empty()) continue;
      ++labelled;
      const Vec2 size = f.text_size(m.text());
      const std::array<float, 4> box{m.label_at.x, m.label_at.y, m.label_at.x + size.x,
                                     m.label_at.y + size.y};
      for (const auto& other : boxes)
        CHECK_FALSE(
            (box[0] < other[2] && other[0] < box[2] && box[1] < other[3] && other[1] < box[3]));
      for (const Vec2& c : f.ranks) {
        const float nx = std::clamp(c.x, box[0], box[2]), ny = std::clamp(c.y, box[1], box[3]);
        CHECK(std::hypot(c.x - nx, c.y - ny) >= f.node_r);
      }
      for (const PacketMark& other : scene.marks)  // nor another packet
        if (&other != &m)
          CHECK_FALSE((box[0] < other.at.x + other.r && other.at.x - other.r < box[2] &&
                       box[1] < other.at.y + other.r && other.at.y - other.r < box[3]));
      boxes.push_back(box);
    }
  }
  CHECK(marks > 20);
  CHECK(labelled * 2 > marks);
}

TEST_CASE("links down and a partition's groups are in the snapshot while they last",
          "[gui][packets]") {
  SnapshotInputs in{.world = 4};
  sim::Outage partition{.from_s = 0.05, .until_s = 0.3};
  for (int a : {0, 1})
    for (int b : {2, 3}) {
      partition.links.push_back({a, b});
      partition.links.push_back({b, a});
    }
  in.outages = {partition};
  in.links.assign(16, LinkView{.latency_s = 0.001});
  // Rank 1 sends to rank 2 during the partition: it waits at rank 1 until 0.3 s.
  const std::vector<Event> events = {send(1, 2, 3, 0.1), send(0, 1, 3, 0.1)};
  in.now_s = 0.2;
  Snapshot s = build_snapshot(events, in);
  CHECK(s.links_down.size() == 8);
  CHECK(s.links_down_until_s == Approx(0.3));
  CHECK(s.partition == std::vector<std::vector<int>>{{0, 1}, {2, 3}});
  REQUIRE(s.messages.size() == 2);
  CHECK(s.messages[0].depart_s == Approx(0.3));
  CHECK(s.messages[0].arrive_s == Approx(0.301));
  CHECK(s.messages[1].depart_s == Approx(0.1));  // inside a group: not held
  const PacketFrame f = frame_for(4);
  const PacketScene scene = place_packets(s, f);
  for (const PacketMark& m : scene.marks) {
    if (m.message != 0) continue;  // the held one sits at its sender's rim
    const float from_sender = std::hypot(m.at.x - f.ranks[1].x, m.at.y - f.ranks[1].y);
    CHECK(from_sender < f.node_r + 2 * m.r + 2);
  }
  // After it heals: nothing down.
  in.now_s = 0.35;
  s = build_snapshot(events, in);
  CHECK(s.links_down.empty());
  CHECK(s.partition.empty());
  // One link down both ways among four ranks is no partition: the others still connect.
  CHECK(partition_groups(4, {{0, 1}, {1, 0}}).empty());
  CHECK(partition_groups(4, {{0, 1}}).empty());
  CHECK(partition_groups(2, {{0, 1}, {1, 0}}) == std::vector<std::vector<int>>{{0}, {1}});
  CHECK(links_down_at({partition}, 0.04).empty());
  CHECK(links_down_at({partition}, 0.05).size() == 8);
}

TEST_CASE("a message the network lost and resent is marked, from the sim to the trace",
          "[gui][packets]") {
  // Half of all transmissions lost, 200 ms RTO: most messages of a small all_reduce resent.
  sim::NetworkConfig network{.link = {.latency_s = 1e-3, .loss = 0.5}, .seed = 3};
  const std::vector<Event> events = all_reduce_events(4, Algorithm::ring, 8, network);
  EventFold fold(4);
  for (const Event& e : events)
    fold.add(e);
  int resent = 0, notes = 0;
  for (const Event& e : events)
    notes += e.kind == EventKind::note && std::string(e.op) == kRetransmitNote;
  for (const FoldMessage& m : fold.messages()) {
    if (m.retransmits == 0) continue;
    ++resent;
    // Each loss costs one RTO on the model clock.
    CHECK(m.arrived.model_s - m.sent.model_s >= m.retransmits * network.rto_s);
  }
  CHECK(resent > 0);
  CHECK(resent == notes);
  // The trace keeps it: written and read back, the fold finds the same counts.
  const TraceEvents back = read_trace_events(trace_json(events), "lossy.json");
  EventFold again(4);
  for (const Event& e : back.events)
    again.add(e);
  std::multiset<int> before, after;
  for (const FoldMessage& m : fold.messages())
    before.insert(m.retransmits);
  for (const FoldMessage& m : again.messages())
    after.insert(m.retransmits);
  CHECK(before == after);
  CHECK(check_trace_text(trace_json(events), "lossy.json").ok());
  // On screen: the mark says so, and so does the estimate of one not yet received.
  SnapshotInputs in{.world = 4, .time_base = TimeBase::model};
  const Snapshot s = build_snapshot(events, in);
  int marked = 0;
  for (const MessageView& m : s.messages) {
    marked += m.retransmits > 0;
    // The message log's "took" cell says it too: "201 ms, resent", or just the time.
    const std::string took = took_text(m);
    INFO(took);
    CHECK(took.starts_with(format_seconds(m.arrive_s - m.send_s)));
    CHECK((took.find(", resent") != std::string::npos) == (m.retransmits > 0));
  }
  CHECK(marked == resent);
  std::vector<Event> pending = {send(0, 1, 3, 1.0),
                                {.kind = EventKind::note,
                                 .rank = 0,
                                 .peer = 1,
                                 .tag = 3,
                                 .seq = 2,
                                 .wall_s = 1.0,
                                 .op = kRetransmitNote}};
  SnapshotInputs lossy{.world = 2, .now_s = 1.1, .rto_s = 0.2};
  lossy.links.assign(4, LinkView{.latency_s = 0.01});
  const Snapshot p = build_snapshot(pending, lossy);
  REQUIRE(p.in_flight.size() == 1);
  CHECK(p.messages[0].retransmits == 2);
  CHECK(p.messages[0].arrive_s == Approx(1.41));
  const PacketScene scene = place_packets(p, frame_for(2));
  REQUIRE(scene.marks.size() == 1);
  CHECK(scene.marks[0].retransmits == 2);
  CHECK(scene.marks[0].note == "resent 2x");
  CHECK(took_text(p.messages[0]) == "in flight, resent 2x");
}

TEST_CASE("after a crash, its messages are lost and the living are counted", "[gui][packets]") {
  // Rank 1 dies before its all_reduce; the others fail inside theirs.
  EventBuffer buffer;
  sim::ClusterOptions options{.nodes = 4, .timeout = std::chrono::seconds(5), .events = &buffer};
  CHECK_THROWS(sim::run_cluster(options, [](Communicator& comm) {
    if (comm.rank() == 1) throw std::runtime_error("rank 1 dies");
    std::vector<float> data(8, 1.0f);
    all_reduce(comm, data, ReduceOp::SUM, {.algorithm = Algorithm::ring});
  }));
  // A collective that failed has no end (CollectiveScope): it is not shown complete.
  int begins = 0, ends = 0;
  for (const Event& e : buffer.snapshot()) {
    begins += e.kind == EventKind::collective_begin;
    ends += e.kind == EventKind::collective_end;
  }
  CHECK(begins == 3);
  CHECK(ends == 0);
  SnapshotInputs in{.world = 4, .algorithm = Algorithm::ring};
  in.crash_s = {0, 1e-9, 0, 0};
  in.now_s = 1e6;  // long after
  Snapshot s = build_snapshot(buffer.snapshot(), in);
  CHECK(s.ranks[1].crashed);
  CHECK(s.gradients.alive == 3);
  CHECK(s.gradients.holding_sum == 0);

  // Rank 0 sent to rank 1, which crashed at 0.5 s; rank 3's message to rank 0 is late.
  const std::vector<Event> events = {
      send(0, 1, 3, 0.4),
      send(2, 3, 3, 0.4),
      {.kind = EventKind::recv_end, .rank = 3, .peer = 2, .tag = 3, .wall_s = 0.41},
      send(3, 0, 3, 0.4)};
  in.links.assign(16, LinkView{.latency_s = 0.01});
  in.crash_s = {0, 0.5, 0, 0};
  in.now_s = 0.405;  // before its arrival: in flight, even to a rank about to crash
  s = build_snapshot(events, in);
  CHECK(s.in_flight.size() == 3);
  in.now_s = 0.6;
  s = build_snapshot(events, in);
  REQUIRE(s.lost.size() == 1);
  CHECK(s.messages[s.lost[0]].dst == 1);
  CHECK(s.messages[s.lost[0]].lost);
  CHECK(took_text(s.messages[s.lost[0]]) == "lost");
  REQUIRE(s.in_flight.size() == 1);  // 3 -> 0: late, but both ends alive and the run goes on
  CHECK(s.messages[s.in_flight[0]].src == 3);
  const PacketScene scene = place_packets(s, frame_for(4));
  CHECK(scene.lost == 1);
  CHECK(in_flight_caption(scene) == "1 in flight, 1 lost");
  for (const PacketMark& m : scene.marks)
    CHECK(m.note == (m.lost ? "lost" : ""));
  // Once the run ended, a message no receive came for is lost too.
  in.complete = true;
  s = build_snapshot(events, in);
  CHECK(s.in_flight.empty());
  CHECK(s.lost.size() == 2);
  // At the end of a run that is over, none is left drawn in flight, even one sent just
  // before the end (its estimated arrival after it): nothing will move it on.
  in.crash_s.clear();
  in.links.assign(16, LinkView{.latency_s = 0.1});  // arrivals estimated at 0.5 s
  in.now_s = -1;                                    // the last event's time
  s = build_snapshot(events, in);
  CHECK(s.now_s == Approx(0.41));
  CHECK(s.in_flight.empty());
  CHECK(s.lost.size() == 2);
  // Before the end of a replayed run, a message is in flight until its estimated arrival.
  in.now_s = 0.405;
  s = build_snapshot(events, in);
  CHECK(s.in_flight.size() == 3);
}
