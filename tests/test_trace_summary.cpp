// Summarised traces (core/io/trace_summary.h): lanes of groups of ranks, the messages
// between groups joined per collective; written by the trace writer past kMaxTraceLanes
// ranks, by `dsgd trace summarize`, and what the reader gives back.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "cli_runner.h"
#include "core/comm/collectives.h"
#include "core/io/trace.h"
#include "core/io/trace_summary.h"
#include "sim/cluster.h"

using namespace dsgd;
using test::TempDir;

namespace {

// 8 simulated nodes: an all_reduce by halving-doubling (partners at distance 1, 2, 4),
// then a ring (each rank sends to the next), of 64 floats each.
std::vector<Event> eight_ranks_reduce() {
  EventBuffer buffer;
  sim::run_cluster({.nodes = 8, .events = &buffer}, [](Communicator& comm) {
    std::vector<float> v(64, float(comm.rank()));
    all_reduce(comm, v, ReduceOp::SUM, {.algorithm = Algorithm::halving_doubling});
    all_reduce(comm, v, ReduceOp::SUM, {.algorithm = Algorithm::ring});
  });
  return buffer.snapshot();
}

uint64_t sends_between(const std::vector<Event>& events, int ranks, int groups, bool crossing) {
  uint64_t n = 0;
  for (const Event& e : events)
    n += e.kind == EventKind::send_begin &&
         (summary_group(e.rank, ranks, groups) != summary_group(e.peer, ranks, groups)) == crossing;
  return n;
}

}  // namespace

TEST_CASE("groups of consecutive ranks differ in size by at most one", "[trace][summary]") {
  CHECK(summary_group(0, 10, 4) == 0);
  CHECK(summary_group(9, 10, 4) == 3);
  int total = 0;
  for (int g = 0; g < 4; ++g) {
    const int size = summary_group_size(g, 10, 4);
    CHECK((size == 2 || size == 3));
    for (int r = summary_group_first(g, 10, 4); r < summary_group_first(g, 10, 4) + size; ++r)
      CHECK(summary_group(r, 10, 4) == g);
    total += size;
  }
  CHECK(total == 10);
  CHECK(summary_groups_for(-1, kMaxTraceLanes) == 0);
  CHECK(summary_groups_for(-1, kMaxTraceLanes + 1) == kSummaryGroups);
  CHECK(summary_groups_for(8, 8) == 0);  // as many lanes as ranks: a lane each
  CHECK(summary_groups_for(4, 8) == 4);
}

TEST_CASE("a summary joins messages between groups and keeps their bytes", "[trace][summary]") {
  const std::vector<Event> events = eight_ranks_reduce();
  SummaryCounts n;
  const std::vector<Event> out = summarize_events(events, 8, 2, &n);
  // Halving-doubling crosses between ranks 0-3 and 4-7 at distance 4, in its reduce-scatter
  // and again in its all-gather (8 ranks x 2); the ring at 3 -> 4 and 7 -> 0 in each of
  // its 2 (R - 1) steps.
  CHECK(n.between == sends_between(events, 8, 2, true));
  CHECK(n.inside == sends_between(events, 8, 2, false));
  CHECK(n.between == 8 * 2 + 2 * 2 * 7);
  CHECK(n.joined == 4);  // both directions, in each of the two all_reduces
  uint64_t crossing_bytes = 0, joined_bytes = 0;
  std::map<int, uint64_t> notes;  // the count each joined message's note gives, by lane
  for (const Event& e : events)
    if (e.kind == EventKind::send_begin &&
        summary_group(e.rank, 8, 2) != summary_group(e.peer, 8, 2))
      crossing_bytes += e.bytes;
  for (const Event& e : out) {
    CHECK((e.rank == 0 || e.rank == 1));
    if (e.kind == EventKind::send_begin) joined_bytes += e.bytes;
    if (e.kind == EventKind::note && std::string(e.op) == kBundleNote) notes[e.rank] += e.seq;
  }
  CHECK(joined_bytes == crossing_bytes);
  CHECK(notes == std::map<int, uint64_t>{{0, n.between / 2}, {1, n.between / 2}});
  // A group's all_reduce runs from its first rank's begin to its last rank's end.
  double begin = 1e300, end = 0;
  for (const Event& e : events)
    if (e.rank < 4 && e.kind == EventKind::collective_begin)
      begin = std::min(begin, e.wall_s);
    else if (e.rank < 4 && e.kind == EventKind::collective_end)
      end = std::max(end, e.wall_s);
  double lane_begin = 1e300, lane_end = 0;
  for (const Event& e : out)
    if (e.rank == 0 && e.kind == EventKind::collective_begin)
      lane_begin = std::min(lane_begin, e.wall_s);
    else if (e.rank == 0 && e.kind == EventKind::collective_end)
      lane_end = std::max(lane_end, e.wall_s);
  CHECK(lane_begin == begin);
  CHECK(lane_end == end);
}

TEST_CASE("a summarised trace is consistent and reads back as one", "[trace][summary]") {
  const std::vector<Event> events = eight_ranks_reduce();
  for (const int groups : {2, 3, 4}) {
    INFO(groups << " groups");
    ChromeTraceWriter writer({.world = 8});
    for (const Event& e : events)
      writer.on_event(e);
    writer.set_lane_groups(groups);
    TempDir dir;
    writer.write(dir / "t.json");
    const TraceCheck c = check_trace_file(dir / "t.json");
    INFO(fmt::format("{}", fmt::join(c.problems, "\n")));
    CHECK(c.ok());
    CHECK(c.ranks == size_t(groups));
    CHECK(c.sends == c.flows);
    const TraceEvents back = load_trace_events(dir / "t.json");
    CHECK(back.world == groups);
    CHECK(back.summary.ranks == 8);
    CHECK(back.summary.groups == groups);
    // Summarising the full trace read back joins the same messages.
    ChromeTraceWriter full({.world = 8});
    for (const Event& e : events)
      full.on_event(e);
    full.write(dir / "full.json");
    SummaryCounts from_file;
    summarize_events(load_trace_events(dir / "full.json").events, 8, groups, &from_file);
    SummaryCounts from_run;
    summarize_events(events, 8, groups, &from_run);
    CHECK(from_file.joined == from_run.joined);
    CHECK(from_file.between == from_run.between);
    CHECK(c.sends == from_run.joined);
  }
}

TEST_CASE("dsgd train past 64 ranks writes lanes of groups, trace summarize does it after",
          "[trace][summary][cli]") {
  TempDir dir;
  const std::string run = "train --nodes 80 --steps 2 --batch 640 -q --allreduce ring";
  const test::CliResult grouped = test::run_dsgd(run + " --trace " + dir / "g.json");
  INFO(grouped.out << grouped.err);
  REQUIRE(grouped.exit_code == 0);
  CHECK(grouped.out.find("80 ranks as 32 lanes of consecutive ranks") != std::string::npos);
  const TraceCheck g = check_trace_file(dir / "g.json");
  CHECK(g.ok());
  CHECK(g.ranks == 32);
  const test::CliResult full =
      test::run_dsgd(run + " --trace-groups 0 --trace " + dir / "full.json");
  REQUIRE(full.exit_code == 0);
  CHECK(check_trace_file(dir / "full.json").ranks == 80);
  const test::CliResult s =
      test::run_dsgd("trace summarize " + dir / "full.json" + " " + dir / "s.json --groups 8");
  INFO(s.out << s.err);
  REQUIRE(s.exit_code == 0);
  CHECK(s.out.find("80 ranks in 8 groups of 10 ranks") != std::string::npos);
  const TraceCheck c = check_trace_file(dir / "s.json");
  CHECK(c.ok());
  CHECK(c.ranks == 8);
}
