// Chrome traces: written from a real simulated cluster and a short training run, parsed back
// and checked here independently of check_trace (every send has exactly one arrow to its
// receive, slices nest per lane, time never runs backwards, names present), merged from
// per-rank files, and refused with a DataError naming the file when malformed.
#include <catch2/catch.hpp>
#include <deque>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>
#include <vector>

#include "cli_runner.h"
#include "core/comm/collectives.h"
#include "core/errors.h"
#include "core/io/atomic_file.h"
#include "core/io/trace.h"
#include "core/train/trainer.h"
#include "sim/cluster.h"

using namespace dsgd;
using nlohmann::json;
using test::read_text;
using test::TempDir;

namespace {

int64_t ns(const json& us) {
  return std::llround(us.get<double>() * 1000.0);
}

// What an independent reading of a trace finds.
struct Reading {
  size_t sends = 0, receives = 0, flows = 0;
  std::set<int> pids;
  std::map<std::pair<int, int>, std::string> lane_names;
  std::map<std::pair<int, int>, std::vector<json>> lanes;  // "X" slices in file order
};

// Per lane: time never runs backwards, and slices nest (no partial overlap).
void check_lanes_nest(const Reading& r) {
  for (const auto& [lane, slices] : r.lanes) {
    std::vector<std::pair<int64_t, int64_t>> open;
    int64_t last = INT64_MIN;
    for (const json& s : slices) {
      const int64_t b = ns(s["ts"]), e = b + ns(s["dur"]);
      INFO("pid " << lane.first << " tid " << lane.second << " " << s.dump());
      REQUIRE(b >= last);
      last = b;
      while (!open.empty() && open.back().second <= b)
        open.pop_back();
      REQUIRE((open.empty() || open.back().second >= e));
      open.emplace_back(b, e);
    }
  }
}

// Arrows: unique ids, one s and one f each, s no later than f, s inside a send slice and
// f inside the matching receive slice; every send and receive has exactly one.
void check_arrows(Reading& r, const std::map<std::string, std::vector<json>>& flows) {
  auto slice_at = [&](const json& f) -> const json* {
    const json* best = nullptr;
    for (const json& s : r.lanes[{f["pid"], f["tid"]}]) {
      const int64_t b = ns(s["ts"]), e = b + ns(s["dur"]), t = ns(f["ts"]);
      if (b <= t && t <= e && s.value("cat", "") == "p2p") best = &s;
    }
    return best;
  };
  std::map<std::tuple<int, int, int, int>, int> arrows;  // (src, dst, tag, k) -> count
  for (const auto& [id, evs] : flows) {
    INFO("flow " << id);
    REQUIRE(evs.size() == 2);
    const json& s = evs[0]["ph"] == "s" ? evs[0] : evs[1];
    const json& f = evs[0]["ph"] == "s" ? evs[1] : evs[0];
    REQUIRE(s["ph"] == "s");
    REQUIRE(f["ph"] == "f");
    CHECK(ns(s["ts"]) <= ns(f["ts"]));
    const json* send = slice_at(s);
    const json* recv = slice_at(f);
    REQUIRE(send != nullptr);
    REQUIRE(recv != nullptr);
    CHECK((*send)["args"]["dir"] == "send");
    CHECK((*recv)["args"]["dir"] == "recv");
    for (const char* key : {"src", "dst", "tag", "k"})
      CHECK((*send)["args"][key] == (*recv)["args"][key]);
    CHECK((*send)["args"]["src"] == s["pid"]);
    CHECK((*recv)["args"]["dst"] == f["pid"]);
    ++arrows[{(*send)["args"]["src"], (*send)["args"]["dst"], (*send)["args"]["tag"],
              (*send)["args"]["k"]}];
    ++r.flows;
  }
  for (const auto& [key, count] : arrows)
    CHECK(count == 1);
}

// Parses and checks the invariants the issue asks for; REQUIREs fail the test.
Reading read_and_verify(const std::string& text) {
  const json doc = json::parse(text);
  REQUIRE(doc.is_object());
  REQUIRE(doc.at("traceEvents").is_array());
  REQUIRE(doc.at("displayTimeUnit") == "ms");
  Reading r;
  std::set<int> named_pids;
  std::map<std::string, std::vector<json>> flows;  // id -> its events
  for (const json& e : doc["traceEvents"]) {
    const std::string ph = e.at("ph");
    if (ph == "M") {
      if (e["name"] == "process_name") named_pids.insert(e["pid"].get<int>());
      if (e["name"] == "thread_name") r.lane_names[{e["pid"], e["tid"]}] = e["args"]["name"];
      continue;
    }
    if (ph == "s" || ph == "f") {
      CHECK(e.at("cat") == "message");
      CHECK(e.at("bp") == "e");
      flows[e.at("id").dump()].push_back(e);
      continue;
    }
    r.pids.insert(e.at("pid").get<int>());
    if (ph != "X") continue;
    REQUIRE(e.at("dur").get<double>() >= 0);
    r.lanes[{e["pid"], e["tid"]}].push_back(e);
    if (e.value("cat", "") == "p2p") ++(e["args"]["dir"] == "send" ? r.sends : r.receives);
  }
  // Names for every process and every lane with slices.
  for (int pid : r.pids)
    CHECK(named_pids.count(pid) == 1);
  for (const auto& [lane, slices] : r.lanes)
    CHECK(r.lane_names.count(lane) == 1);
  check_lanes_nest(r);
  check_arrows(r, flows);
  return r;
}

void expect(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("wrong values: ") + what);
}

// 4 nodes: user messages (blocking, isends in flight, any-source receives), a ring and a
// naive all_reduce and a broadcast. Node functions throw (not REQUIRE: Catch is not
// thread-safe) and run_cluster rethrows.
void run_traffic(EventSink& sink) {
  sim::run_cluster({.nodes = 4, .events = &sink}, [](Communicator& comm) {
    const int r = comm.rank(), n = comm.size();
    std::vector<float> v{float(r), 1, 2, 3, 4};
    // Everyone sends two messages to its right neighbour, both in flight at once.
    std::vector<float> a(5, float(r)), b(5, float(10 + r)), in(5);
    Request s1 = comm.isend(a, (r + 1) % n, 3);
    Request s2 = comm.isend(b, (r + 1) % n, 3);
    comm.recv(in, (r - 1 + n) % n, 3);
    expect(in[0] == float((r - 1 + n) % n), "first message");
    comm.recv(in, kAnySource, 3);
    expect(in[0] == float(10 + (r - 1 + n) % n), "second message");
    s1.wait();
    s2.wait();
    all_reduce(comm, v, ReduceOp::SUM, {.algorithm = Algorithm::ring});
    expect(v[0] == 6.0f, "ring sum");
    all_reduce(comm, v, ReduceOp::SUM, {.algorithm = Algorithm::naive});
    expect(v[1] == 16.0f, "naive sum");
    broadcast(comm, v, 2);
  });
}

// The message of the DataError that f throws; fails the test when it throws none.
template <typename F>
std::string data_error_of(F f) {
  try {
    f();
  } catch (const DataError& e) {
    return e.what();
  }
  FAIL("expected a DataError");
  return "";
}

size_t count(const std::vector<Event>& events, EventKind kind) {
  return std::count_if(events.begin(), events.end(),
                       [&](const Event& e) { return e.kind == kind; });
}

std::vector<Event> of_rank(const std::vector<Event>& events, int rank) {
  std::vector<Event> out;
  for (const Event& e : events)
    if (e.rank == rank) out.push_back(e);
  return out;
}

}  // namespace

TEST_CASE("a simulated cluster's trace: one arrow per message, slices nest, time runs forward",
          "[trace]") {
  EventBuffer buffer;
  ChromeTraceWriter writer;
  EventFanout fan;
  fan.add(&buffer);
  fan.add(&writer);
  run_traffic(fan);
  const std::vector<Event> events = buffer.snapshot();
  const size_t messages = count(events, EventKind::send_begin);
  REQUIRE(messages >= 8 + 24 + 6);  // user + ring (2(R-1)R) + naive (2(R-1)), + broadcast
  REQUIRE(count(events, EventKind::recv_end) == messages);
  TempDir dir;
  writer.write(dir / "run.json");
  const Reading r = read_and_verify(read_text(dir / "run.json"));
  CHECK(r.sends == messages);
  CHECK(r.receives == messages);
  CHECK(r.flows == messages);
  CHECK(r.pids == std::set<int>{0, 1, 2, 3});
  for (int pid = 0; pid < 4; ++pid) {
    CHECK(r.lane_names.at({pid, 0}) == "compute");
    CHECK(r.lane_names.at({pid, 1}) == "communication");
  }
  // Collectives are slices on the communication lane, and their messages sit inside them.
  size_t all_reduces = 0, inside = 0;
  for (int pid = 0; pid < 4; ++pid) {
    std::vector<std::pair<int64_t, int64_t>> collectives;
    for (const json& s : r.lanes.at({pid, 1}))
      if (s["cat"] == "collective" && s["name"] == "all_reduce") {
        ++all_reduces;
        collectives.emplace_back(ns(s["ts"]), ns(s["ts"]) + ns(s["dur"]));
      }
    for (const json& s : r.lanes.at({pid, 1})) {
      if (s["cat"] != "p2p" || s["args"]["tag"] == 3) continue;
      const int64_t b = ns(s["ts"]);
      for (auto [cb, ce] : collectives)
        if (cb <= b && b <= ce) ++inside;
    }
  }
  CHECK(all_reduces == 8);
  CHECK(inside == 2 * (24 + 6));  // both ends of the ring's and naive's messages
  // Payload previews and sizes travel in args.
  const json& first_send = *std::find_if(r.lanes.at({0, 1}).begin(), r.lanes.at({0, 1}).end(),
                                         [](const json& s) { return s["cat"] == "p2p"; });
  CHECK(first_send["args"]["bytes"] == 20);
  CHECK(first_send["args"]["preview"].size() == 4);

  const TraceCheck c = check_trace_file(dir / "run.json");
  INFO(fmt::format("{}", fmt::join(c.problems, "\n")));
  CHECK(c.ok());
  CHECK(c.ranks == 4);
  CHECK(c.sends == messages);
  CHECK(c.flows == messages);
  CHECK(c.external_sends == 0);
}

TEST_CASE("a training run's trace: steps enclose forward_backward and update", "[trace]") {
  ChromeTraceWriter writer;
  const Dataset data = load_dataset("synthetic:train=256,test=64");
  TrainConfig config;
  config.model = ModelSpec::parse("mlp:8");
  config.global_batch = 64;
  config.steps = 3;
  config.epochs = 0;
  config.allreduce = Algorithm::ring;
  sim::run_cluster({.nodes = 4, .events = &writer},
                   [&](Communicator& comm) { train(comm, data, config); });
  TempDir dir;
  writer.write(dir / "train.json");
  const Reading t = read_and_verify(read_text(dir / "train.json"));
  REQUIRE(t.flows > 0);
  CHECK(t.flows == t.sends);
  for (int pid = 0; pid < 4; ++pid) {
    const auto& compute = t.lanes.at({pid, 0});
    std::vector<json> steps;
    for (const json& s : compute)
      if (s["cat"] == "step") steps.push_back(s);
    REQUIRE(steps.size() == 3);
    CHECK(steps[0]["name"] == "step 1");
    CHECK(steps[2]["args"]["step"] == 3);
    for (const json& step : steps) {
      const int64_t b = ns(step["ts"]), e = b + ns(step["dur"]);
      int phases = 0;
      for (const json& s : compute)
        if (s["cat"] == "compute" && ns(s["ts"]) >= b && ns(s["ts"]) + ns(s["dur"]) <= e) ++phases;
      CHECK(phases == 2);  // forward_backward and update
    }
  }
  CHECK(json::parse(read_text(dir / "train.json"))["otherData"]["time_base"] == "wall");
  CHECK(check_trace_file(dir / "train.json").ok());
  // No events at all is still a valid, empty trace.
  CHECK(read_and_verify(trace_json({})).flows == 0);
}

TEST_CASE("per-rank trace files merge into one with the same arrows", "[trace][merge]") {
  EventBuffer buffer;
  run_traffic(buffer);
  const std::vector<Event> events = buffer.snapshot();
  TempDir dir;
  write_file_atomic(dir / "all.json", trace_json(events));
  const TraceCheck whole = check_trace_file(dir / "all.json");
  REQUIRE(whole.ok());
  REQUIRE(whole.flows > 0);

  std::vector<std::string> parts;
  for (int rank = 0; rank < 4; ++rank) {
    ChromeTraceWriter w;
    for (const Event& e : of_rank(events, rank))
      w.on_event(e);
    parts.push_back(dir / fmt::format("rank{}.json", rank));
    w.write(parts.back());
    const TraceCheck part = check_trace_file(parts.back());
    INFO(fmt::format("{}", fmt::join(part.problems, "\n")));
    CHECK(part.ok());  // the other ends are elsewhere: counted, not problems
    CHECK(part.flows == 0);
    CHECK(part.external_sends == part.sends);
    CHECK(part.external_receives == part.receives);
  }
  merge_traces(parts, dir / "merged.json");
  const TraceCheck merged = check_trace_file(dir / "merged.json");
  INFO(fmt::format("{}", fmt::join(merged.problems, "\n")));
  CHECK(merged.ok());
  CHECK(merged.ranks == 4);
  CHECK(merged.flows == whole.flows);
  CHECK(merged.sends == whole.sends);
  CHECK(merged.external_sends == 0);
  const Reading r = read_and_verify(read_text(dir / "merged.json"));
  CHECK(r.flows == whole.flows);
  CHECK(json::parse(read_text(dir / "merged.json"))["otherData"]["merged_from"].size() == 4);

  // Merging a merged trace with one of its parts would hold rank 0 twice.
  CHECK_THAT(data_error_of([&] {
               merge_traces({dir / "merged.json", parts[0]}, dir / "bad.json");
             }),
             Catch::Contains("rank 0 is also in"));
  CHECK(!std::filesystem::exists(dir / "bad.json"));

  // The CLI does the same.
  const auto cli = test::run_dsgd(fmt::format("trace merge {} {} {} {} {}", dir / "cli.json",
                                              parts[0], parts[1], parts[2], parts[3]));
  INFO(cli.err);
  CHECK(cli.exit_code == 0);
  CHECK_THAT(cli.out, Catch::Contains(fmt::format("{} arrows", whole.flows)));
  const auto check = test::run_dsgd("trace check " + dir / "cli.json");
  CHECK(check.exit_code == 0);
  CHECK_THAT(check.out, Catch::Contains("ok"));
}

TEST_CASE("overlapping asynchronous messages move to an overlap lane and still nest", "[trace]") {
  // Rank 0's isend (0..10 us) is still in flight while its receive runs (5..15 us).
  std::vector<Event> ev{
      {.kind = EventKind::send_begin, .rank = 0, .peer = 1, .tag = 0, .bytes = 4, .wall_s = 0},
      {.kind = EventKind::recv_begin, .rank = 0, .peer = 1, .tag = 0, .wall_s = 5e-6},
      {.kind = EventKind::send_end, .rank = 0, .peer = 1, .tag = 0, .wall_s = 10e-6},
      {.kind = EventKind::recv_end, .rank = 0, .peer = 1, .tag = 0, .bytes = 4, .wall_s = 15e-6},
      {.kind = EventKind::send_begin, .rank = 1, .peer = 0, .tag = 0, .bytes = 4, .wall_s = 1e-6},
      {.kind = EventKind::recv_begin, .rank = 1, .peer = -1, .tag = 0, .wall_s = 2e-6},
      {.kind = EventKind::recv_end, .rank = 1, .peer = 0, .tag = 0, .bytes = 4, .wall_s = 12e-6},
  };
  const std::string text = trace_json(ev);
  const Reading r = read_and_verify(text);
  CHECK(r.flows == 2);
  CHECK(r.lane_names.at({0, 2}) == "communication (overlap)");
  CHECK(r.lanes.at({0, 1}).size() == 1);
  CHECK(r.lanes.at({0, 2}).size() == 1);
  CHECK(r.lanes.at({0, 1})[0]["dur"] == 10.0);  // the send, begin to send_end
  CHECK(check_trace_text(text, "x.json").ok());
}

TEST_CASE("a message inside another message's slice moves to an overlap lane", "[trace]") {
  // Rank 0 receives from 1 (0..1 us) and sends to 2 in the middle of it (0.4..0.6 us), as two
  // ranks of one summarised lane do: nested on one lane, the receive's arrow, which lands
  // 0.5 us before its end, would bind to the send.
  std::vector<Event> ev{
      {.kind = EventKind::recv_begin, .rank = 0, .peer = 1, .wall_s = 0},
      {.kind = EventKind::send_begin, .rank = 0, .peer = 2, .bytes = 4, .wall_s = 0.4e-6},
      {.kind = EventKind::send_end, .rank = 0, .peer = 2, .wall_s = 0.6e-6},
      {.kind = EventKind::recv_end, .rank = 0, .peer = 1, .bytes = 4, .wall_s = 1e-6},
      {.kind = EventKind::send_begin, .rank = 1, .peer = 0, .bytes = 4, .wall_s = 0},
      {.kind = EventKind::send_end, .rank = 1, .peer = 0, .wall_s = 0.1e-6},
      {.kind = EventKind::recv_begin, .rank = 2, .peer = 0, .wall_s = 0},
      {.kind = EventKind::recv_end, .rank = 2, .peer = 0, .bytes = 4, .wall_s = 0.8e-6},
  };
  const std::string text = trace_json(ev);
  const TraceCheck c = check_trace_text(text, "x.json");
  INFO(fmt::format("{}", fmt::join(c.problems, "\n")));
  CHECK(c.ok());
  const Reading r = read_and_verify(text);
  CHECK(r.lanes.at({0, 1}).size() == 1);
  CHECK(r.lanes.at({0, 2}).size() == 1);
}

TEST_CASE("model time base: ts from model_s, refused when an event has none", "[trace]") {
  std::vector<Event> ev{
      {.kind = EventKind::send_begin, .rank = 0, .peer = 1, .wall_s = 0.5, .model_s = 0.001},
      {.kind = EventKind::recv_begin, .rank = 1, .peer = 0, .wall_s = 0.5, .model_s = 0.0005},
      {.kind = EventKind::recv_end, .rank = 1, .peer = 0, .wall_s = 0.9, .model_s = 0.003},
  };
  const json doc = json::parse(trace_json(ev, {.time_base = TimeBase::model}));
  CHECK(doc["otherData"]["time_base"] == "model");
  std::set<double> ts;
  for (const json& e : doc["traceEvents"])
    if (e["ph"] == "X") ts.insert(e["ts"].get<double>());
  CHECK(ts == std::set<double>{1000.0, 500.0});
  read_and_verify(doc.dump());
  ev[1].model_s = -1;
  CHECK_THROWS_AS(trace_json(ev, {.time_base = TimeBase::model}), UsageError);
  CHECK(parse_time_base("model") == TimeBase::model);
  CHECK_THROWS_AS(parse_time_base("cpu"), UsageError);
}

TEST_CASE("model time: events at one instant are spread in causal order and still pair",
          "[trace]") {
  // An ideal link delivers in zero model time: everything below happens at model time 0.
  std::vector<Event> ev;
  for (int i = 0; i < 3; ++i) {
    const double w = i * 1e-3;
    ev.push_back({.kind = EventKind::send_begin, .rank = 0, .peer = 1, .wall_s = w + 1e-4});
    ev.push_back({.kind = EventKind::recv_begin, .rank = 1, .peer = 0, .wall_s = w});
    ev.push_back({.kind = EventKind::recv_end, .rank = 1, .peer = 0, .wall_s = w + 2e-4});
  }
  for (Event& e : ev)
    e.model_s = 0.0;
  const std::string text = trace_json(ev, {.time_base = TimeBase::model});
  const Reading r = read_and_verify(text);
  CHECK(r.flows == 3);
  for (int pid : {0, 1}) {  // on each lane three slices, apart, within a microsecond
    const auto& slices = r.lanes.at({pid, 1});
    REQUIRE(slices.size() == 3);
    CHECK(ns(slices[0]["ts"]) < ns(slices[1]["ts"]));
    CHECK(ns(slices[1]["ts"]) < ns(slices[2]["ts"]));
    CHECK(ns(slices[2]["ts"]) < 1000);
    CHECK(slices[2]["args"]["model_s"] == 0.0);  // args keep the exact model time
  }
  const TraceCheck c = check_trace_text(text, "model.json");
  INFO(fmt::format("{}", fmt::join(c.problems, "\n")));
  CHECK(c.ok());
  CHECK(c.flows == 3);
}

TEST_CASE("a failed run's trace closes what was open and stays consistent", "[trace]") {
  std::vector<Event> ev{
      {.kind = EventKind::step_begin, .rank = 0, .seq = 1, .wall_s = 0.001, .op = "step"},
      {.kind = EventKind::collective_begin, .rank = 0, .wall_s = 0.002, .op = "all_reduce"},
      {.kind = EventKind::recv_begin, .rank = 0, .peer = 3, .tag = 9, .wall_s = 0.003},
      {.kind = EventKind::note, .rank = 0, .wall_s = 0.004, .op = "peer lost"},
  };
  const std::string text = trace_json(ev);
  const Reading r = read_and_verify(text);
  CHECK(r.lanes.at({0, 1}).size() == 2);  // the collective and the pending receive
  CHECK(r.lanes.at({0, 1})[1]["args"]["unfinished"] == true);
  const TraceCheck c = check_trace_text(text, "failed.json");
  CHECK(c.ok());
  CHECK(c.receives == 0);
}

TEST_CASE("check_trace finds what is wrong", "[trace][check]") {
  auto meta = [](int pid, int tid) {
    return fmt::format(
        R"({{"ph":"M","name":"process_name","pid":{0},"tid":0,"args":{{"name":"rank {0}"}}}},)"
        R"({{"ph":"M","name":"thread_name","pid":{0},"tid":{1},"args":{{"name":"lane"}}}})",
        pid, tid);
  };
  auto x = [](int pid, double ts, double dur, const std::string& name, const std::string& extra) {
    return fmt::format(R"({{"ph":"X","pid":{},"tid":1,"ts":{},"dur":{},"name":"{}"{}}})", pid, ts,
                       dur, name, extra);
  };
  auto doc = [](const std::vector<std::string>& evs) {
    return fmt::format(R"({{"traceEvents":[{}]}})", fmt::join(evs, ","));
  };
  const std::string send = R"(,"cat":"p2p","args":{"dir":"send","src":0,"dst":1,"tag":0,"k":0})";
  const std::string recv = R"(,"cat":"p2p","args":{"dir":"recv","src":0,"dst":1,"tag":0,"k":0})";
  const std::string s = R"({"ph":"s","cat":"message","id":1,"pid":0,"tid":1,"ts":1})";
  const std::string f = R"({"ph":"f","cat":"message","id":1,"pid":1,"tid":1,"ts":12,"bp":"e"})";
  const std::string good =
      doc({meta(0, 1), meta(1, 1), x(0, 1, 1, "send", send), x(1, 10, 5, "recv", recv), s, f});
  {
    const TraceCheck c = check_trace_text(good, "good.json");
    INFO(fmt::format("{}", fmt::join(c.problems, "\n")));
    CHECK(c.ok());
    CHECK(c.flows == 1);
  }
  auto problems_of = [](const std::string& text) {
    const TraceCheck c = check_trace_text(text, "t.json");
    REQUIRE_FALSE(c.ok());
    return fmt::format("{}", fmt::join(c.problems, "\n"));
  };
  // A send without its arrow.
  CHECK_THAT(problems_of(doc(
                 {meta(0, 1), meta(1, 1), x(0, 1, 1, "send", send), x(1, 10, 5, "recv", recv)})),
             Catch::Contains("has 0 arrows"));
  // An arrow that lands before it leaves.
  CHECK_THAT(
      problems_of(doc({meta(0, 1), meta(1, 1), x(0, 20, 1, "send", send), x(1, 10, 5, "recv", recv),
                       R"({"ph":"s","cat":"message","id":1,"pid":0,"tid":1,"ts":20.5})", f})),
      Catch::Contains("before it leaves"));
  // Two slices that overlap without nesting.
  CHECK_THAT(problems_of(doc({meta(0, 1), x(0, 1, 10, "a", ""), x(0, 5, 10, "b", "")})),
             Catch::Contains("without nesting"));
  // Time running backwards on a lane.
  CHECK_THAT(problems_of(doc({meta(0, 1), x(0, 10, 1, "a", ""), x(0, 5, 1, "b", "")})),
             Catch::Contains("time runs backwards"));
  // No names.
  CHECK_THAT(problems_of(doc({x(0, 1, 1, "a", "")})), Catch::Contains("no process_name"));
  // A flow whose start has no finish.
  CHECK_THAT(problems_of(doc(
                 {meta(0, 1), meta(1, 1), x(0, 1, 1, "send", send), x(1, 10, 5, "recv", recv), s})),
             Catch::Contains("0 finish(es)"));
}

TEST_CASE("check_trace skips fields of unexpected types instead of failing inside",
          "[trace][check]") {
  // Found by fuzz_trace: these threw nlohmann::json's type_error ("internal error", exit 1),
  // or read a pid that is not there.
  for (const char* text : {
           R"([{"ph":"M","pid":0,"name":5}])",                         // a name that is a number
           R"([{"ph":"X","pid":0,"tid":1,"ts":1,"dur":1,"name":7}])",  // the same on a slice
           R"([{"ph":"s","cat":5,"id":1,"pid":0,"tid":1,"ts":1}])",    // a numeric flow cat
           R"([{"ph":"C","pid":0,"tid":"x","ts":1}])",  // an unchecked kind, string tid
           R"([{"ph":"C","tid":2,"ts":1}])",            // an unchecked kind, no pid
       }) {
    INFO(text);
    CHECK_NOTHROW(check_trace_text(text, "odd.json"));
  }
  CHECK(check_trace_text(R"([{"ph":"C","tid":2,"ts":1}])", "odd.json").ranks == 0);
}

TEST_CASE("malformed trace files are a DataError naming the file", "[trace][bad-input]") {
  TempDir dir;
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return dir / name;
  };
  const std::string not_json = write("run.json", "{\"traceEvents\": [");
  const std::string no_events = write("obj.json", "{\"events\": []}");
  const std::string no_ph = write("noph.json", "{\"traceEvents\": [{\"ts\": 1}]}");
  const std::string no_ts = write("nots.json", R"({"traceEvents":[{"ph":"X","pid":0,"tid":0}]})");
  // nlohmann::json reports a number out of double's range as out_of_range, not parse_error.
  const std::string huge_ts =
      write("huge.json", R"({"traceEvents":[{"ph":"X","pid":0,"tid":0,"ts":1e999,"dur":1}]})");
  for (const auto& [file, why] : std::vector<std::pair<std::string, std::string>>{
           {not_json, "invalid JSON"},
           {no_events, "\"traceEvents\" array"},
           {no_ph, "\"ph\""},
           {no_ts, "numeric ts"},
           {huge_ts, "invalid JSON: number overflow"}}) {
    const std::string& path = file;  // clang 14's lambdas cannot capture a structured binding
    INFO(path);
    CHECK_THAT(data_error_of([&] { check_trace_file(path); }),
               Catch::Contains(path + ": not a Chrome trace: ") && Catch::Contains(why));
    CHECK_THAT(data_error_of([&] { merge_traces({path}, dir / "out.json"); }),
               Catch::Contains(path + ": not a Chrome trace: "));
  }
  CHECK_THAT(data_error_of([&] { check_trace_file(dir / "missing.json"); }),
             Catch::Contains("missing.json: cannot open"));
  CHECK(!std::filesystem::exists(dir / "out.json"));
  // The CLI: exit 2 and a one-line error for a malformed file; exit 2 and the problems
  // listed for an inconsistent one.
  const auto bad = test::run_dsgd("trace check " + not_json);
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("run.json: not a Chrome trace"));
  const std::string overlap = write(
      "overlap.json",
      R"({"traceEvents":[{"ph":"M","name":"process_name","pid":0,"tid":0,"args":{"name":"r"}},)"
      R"({"ph":"M","name":"thread_name","pid":0,"tid":0,"args":{"name":"t"}},)"
      R"({"ph":"X","pid":0,"tid":0,"ts":1,"dur":10,"name":"a"},)"
      R"({"ph":"X","pid":0,"tid":0,"ts":5,"dur":10,"name":"b"}]})");
  const auto inconsistent = test::run_dsgd("trace check " + overlap);
  CHECK(inconsistent.exit_code == 2);
  CHECK_THAT(inconsistent.out, Catch::Contains("problem:") && Catch::Contains("without nesting"));
}

namespace {

// The fixed event list of tests/data/trace/fold_events.tsv (a simulated 3-rank run: user
// messages, ring (small, and segmented), halving_doubling, tree and naive all_reduces, a
// broadcast, a barrier, steps, compute phases, a note and things left open), one event a line.
struct EventFile {
  std::deque<std::string> ops;  // Event::op points here
  std::vector<Event> events;
};

EventFile read_event_file(const std::string& path) {
  EventFile f;
  std::istringstream lines(read_text(path));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> v;
    std::istringstream fields(line);
    for (std::string field; std::getline(fields, field, '\t');)
      v.push_back(field);
    if (v.size() == 13) v.emplace_back();  // an empty op
    REQUIRE(v.size() == 14);
    Event e{.kind = static_cast<EventKind>(std::stoi(v[0])),
            .rank = std::stoi(v[1]),
            .peer = std::stoi(v[2]),
            .tag = std::stoi(v[3]),
            .bytes = std::stoull(v[4]),
            .seq = std::stoull(v[5]),
            .wall_s = std::strtod(v[6].c_str(), nullptr),
            .model_s = std::strtod(v[7].c_str(), nullptr),
            .preview_count = static_cast<uint8_t>(std::stoi(v[8]))};
    for (int i = 0; i < 4; ++i)
      e.preview[i] = std::strtof(v[9 + i].c_str(), nullptr);
    f.ops.push_back(v[13]);
    e.op = f.ops.back().c_str();
    f.events.push_back(e);
  }
  return f;
}

// The trace without what the writer added since the golden files were written (a
// collective message's place in its collective), and with the version normalised.
std::string without_phases(const std::string& text) {
  static const std::regex phase(R"(,"collective":"[^"]*","phase":"[^"]*"(,"[a-z]+":-?[0-9]+)*)");
  static const std::regex version(R"("generator":"dsgd [^"]*")");
  return std::regex_replace(std::regex_replace(text, phase, ""), version, "\"generator\":\"dsgd\"");
}

}  // namespace

TEST_CASE("a fixed event list gives the trace the writer gave before the event fold",
          "[trace][golden]") {
  const std::string dir = std::string(DSGD_SOURCE_DIR) + "/tests/data/trace/";
  const EventFile f = read_event_file(dir + "fold_events.tsv");
  REQUIRE(f.events.size() > 200);
  for (TimeBase base : {TimeBase::wall, TimeBase::model}) {
    INFO(to_string(base));
    const std::string now = trace_json(f.events, {.time_base = base});
    const std::string before = read_text(dir + "fold_" + to_string(base) + ".json");
    CHECK(without_phases(now) == without_phases(before));
    CHECK(check_trace_text(now, "fold.json").ok());
    // The phases added: ring steps with chunks (and segments for the big buffer), the other
    // algorithms' own phases; user messages get none.
    for (const char* added :
         {R"("collective":"all_reduce ring","phase":"reduce-scatter","step":0,"steps":4,"chunk":)",
          R"("phase":"all-gather","step":3,"steps":4,"chunk":)", R"("segment":1,"segments":2)",
          R"("collective":"all_reduce halving_doubling","phase":"fold","step":0)",
          R"("collective":"all_reduce halving_doubling","phase":"unfold")",
          R"("collective":"all_reduce tree","phase":"reduce")",
          R"("collective":"all_reduce naive","phase":"from root")",
          R"("collective":"barrier","phase":"round")"})
      CHECK_THAT(now, Catch::Contains(added));
    const json doc = json::parse(now);
    for (const json& e : doc["traceEvents"])
      if (e.value("cat", "") == "p2p" && e["args"]["tag"] == 7)
        CHECK_FALSE(e["args"].contains("phase"));
  }
}

TEST_CASE("the run description round-trips through a trace, a merge and the reader",
          "[trace][run]") {
  const std::string run = R"({"nodes":2,"model":"mlp","lr":0.05,"network":{"latency_s":0.001}})";
  const std::vector<Event> events = {
      {.kind = EventKind::send_begin, .rank = 0, .peer = 1, .tag = 1, .bytes = 4, .wall_s = 0.001},
      {.kind = EventKind::recv_end, .rank = 1, .peer = 0, .tag = 1, .bytes = 4, .wall_s = 0.002},
  };
  const std::string text = trace_json(events, {.run_json = run});
  CHECK(json::parse(text)["otherData"]["run"] == json::parse(run));
  CHECK(read_trace_events(text, "run.json").run_json == run);
  CHECK(read_trace_events(trace_json(events), "plain.json").run_json.empty());
  CHECK(trace_json(events).find("\"run\"") == std::string::npos);
  // A merge keeps the first input's.
  TempDir dir;
  write_file_atomic(dir / "a.json", trace_json(of_rank(events, 0), {.run_json = run}));
  write_file_atomic(dir / "b.json", trace_json(of_rank(events, 1), {.run_json = "{\"nodes\":9}"}));
  merge_traces({dir / "a.json", dir / "b.json"}, dir / "merged.json");
  CHECK(load_trace_events(dir / "merged.json").run_json == run);
}

TEST_CASE("a trace reads back into the events it was drawn from", "[trace][read]") {
  const std::string dir = std::string(DSGD_SOURCE_DIR) + "/tests/data/trace/";
  const EventFile f = read_event_file(dir + "fold_events.tsv");
  const TraceEvents back = read_trace_events(trace_json(f.events), "fold.json");
  CHECK(back.world == 3);
  CHECK(back.time_base == TimeBase::model);
  // Every message, note and slice comes back; what was open stays open (no end event).
  for (EventKind kind :
       {EventKind::send_begin, EventKind::recv_end, EventKind::note, EventKind::collective_begin,
        EventKind::collective_end, EventKind::step_begin, EventKind::compute_begin}) {
    INFO(to_string(kind));
    CHECK(count(back.events, kind) == count(f.events, kind));
  }
  CHECK(count(back.events, EventKind::step_end) == count(f.events, EventKind::step_end) - 1);
  CHECK(count(back.events, EventKind::compute_end) == count(f.events, EventKind::compute_end) - 1);
  // Written again, the trace has the same slices and arrows.
  const TraceCheck once = check_trace_text(trace_json(f.events), "once.json");
  const TraceCheck twice = check_trace_text(trace_json(back.events), "twice.json");
  CHECK(twice.ok());
  CHECK(twice.slices == once.slices);
  CHECK(twice.flows == once.flows);
}

TEST_CASE("a message naming a rank past what a trace holds is a problem, not a crash", "[trace]") {
  const std::string text =
      R"({"traceEvents":[{"ph":"X","cat":"p2p","name":"send to 2147483647","pid":0,"tid":1,)"
      R"("ts":1,"dur":1,"args":{"dir":"send","src":0,"dst":2147483647,"tag":0,"k":0}}]})";
  const TraceCheck check = check_trace_text(text, "big.json");
  CHECK_FALSE(check.ok());
  bool named = false;
  for (const std::string& p : check.problems)
    named |= p.find("rank 2147483647") != std::string::npos;
  CHECK(named);
  CHECK_THROWS_WITH(read_trace_events(text, "big.json"), Catch::Contains("rank 2147483647"));
}

TEST_CASE("a rank's own trace file labels its collective messages as the whole trace does",
          "[trace][run]") {
  EventBuffer buffer;
  run_traffic(buffer);
  const std::vector<Event> events = buffer.snapshot();
  // The args of every send slice of `rank` in a collective, in file order. (Its receives
  // are labelled from their sends, which this rank's file does not hold.)
  const auto phases = [](const std::string& text, int rank) {
    std::vector<std::string> out;
    const json doc = json::parse(text);
    for (const json& e : doc["traceEvents"])
      if (e.value("cat", "") == "p2p" && e["pid"] == rank && e["args"]["dir"] == "send" &&
          e["args"].contains("phase"))
        out.push_back(e["args"].dump());
    return out;
  };
  const std::string whole = trace_json(events);
  for (int rank = 0; rank < 4; ++rank) {
    INFO("rank " << rank);
    const std::vector<std::string> want = phases(whole, rank);
    CHECK(want.size() >= 6);  // ring and naive messages (and broadcast ones)
    ChromeTraceWriter writer;
    for (const Event& e : of_rank(events, rank))
      writer.on_event(e);
    writer.set_world(4);  // its peers alone would say 2 or 3 ranks
    TempDir dir;
    writer.write(dir / "rank.json");
    CHECK(phases(read_text(dir / "rank.json"), rank) == want);
  }
}

TEST_CASE("per_rank_path puts the rank before the extension") {
  CHECK(per_rank_path("run.json", 3) == "run.rank3.json");
  CHECK(per_rank_path("out/trace.json", 0) == "out/trace.rank0.json");
  CHECK(per_rank_path("trace", 12) == "trace.rank12");
}
