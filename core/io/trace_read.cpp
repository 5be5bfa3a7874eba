// Reading Chrome traces back: merge per-rank files into one, and check a trace's
// consistency (arrows, nesting, time order, names). Uses nlohmann::json, privately.
// Sections: [reading] [merge] [check].
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/io/atomic_file.h"
#include "core/io/trace.h"
#include "core/io/trace_detail.h"

namespace dsgd {
namespace td = trace_detail;
using nlohmann::json;

namespace {

// ---------------------------------------------------------------------------------------
// [reading]
// ---------------------------------------------------------------------------------------

[[noreturn]] void not_a_trace(const std::string& name, const std::string& why) {
  throw DataError(fmt::format(
      "{}: not a Chrome trace: {}; give a file written by dsgd train --trace", name, why));
}

std::string read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw DataError(fmt::format("{}: cannot open: {}; check the path", path, std::strerror(errno)));
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) throw DataError(fmt::format("{}: read failed", path));
  return s.str();
}

// The document and its event array. Accepts the object form {"traceEvents": [...]} and the
// bare array form, as chrome://tracing does. Every event must be an object with a "ph"
// string; slices, instants and flows need numeric pid, tid and ts ("X" also dur >= 0).
struct Document {
  json root;
  const json* events = nullptr;
};

Document parse_trace(std::string_view text, const std::string& name) {
  Document d;
  try {
    d.root = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for 1e999
    std::string why = e.what();
    if (const auto p = why.find("] "); p != std::string::npos) why = why.substr(p + 2);
    not_a_trace(name, "invalid JSON: " + why);
  }
  if (d.root.is_array()) {
    d.events = &d.root;
  } else if (d.root.is_object() && d.root.contains("traceEvents") &&
             d.root["traceEvents"].is_array()) {
    d.events = &d.root["traceEvents"];
  } else {
    not_a_trace(name, "expected an object with a \"traceEvents\" array");
  }
  for (size_t i = 0; i < d.events->size(); ++i) {
    const json& e = (*d.events)[i];
    if (!e.is_object() || !e.contains("ph") || !e["ph"].is_string())
      not_a_trace(name, fmt::format("event {} is not an object with a \"ph\" string", i));
    const std::string ph = e["ph"];
    if (ph == "M") {
      if (!e.contains("pid") || !e["pid"].is_number_integer())
        not_a_trace(name, fmt::format("metadata event {} has no integer pid", i));
      continue;
    }
    if (ph != "X" && ph != "B" && ph != "E" && ph != "i" && ph != "I" && ph != "s" && ph != "t" &&
        ph != "f")
      continue;  // counters, async events...: kept, not checked
    for (const char* key : {"pid", "tid"})
      if (!e.contains(key) || !e[key].is_number_integer())
        not_a_trace(name, fmt::format("event {} (ph \"{}\") has no integer {}", i, ph, key));
    if (!e.contains("ts") || !e["ts"].is_number())
      not_a_trace(name, fmt::format("event {} (ph \"{}\") has no numeric ts", i, ph));
    if (ph == "X" && (!e.contains("dur") || !e["dur"].is_number() || e["dur"].get<double>() < 0))
      not_a_trace(name, fmt::format("event {} (ph \"X\") has no dur >= 0", i));
  }
  return d;
}

std::string time_base_of(const Document& d) {
  if (d.root.is_object() && d.root.contains("otherData") && d.root["otherData"].is_object()) {
    const json& o = d.root["otherData"];
    if (o.contains("time_base") && o["time_base"].is_string()) return o["time_base"];
  }
  return "wall";
}

bool is_flow(const json& e) {
  const std::string ph = e["ph"];
  return ph == "s" || ph == "t" || ph == "f";
}

// A send or receive slice written by trace_json: cat "p2p", args {dir, src, dst, tag, k}.
// Returns false for other events; `why` says what is missing from a broken one.
bool message_end(const json& e, td::MessageEnd& m, std::string* why) {
  if (e["ph"] != "X" || !e.contains("cat") || e["cat"] != td::kP2pCat) return false;
  const json* args = e.contains("args") && e["args"].is_object() ? &e["args"] : nullptr;
  for (const char* key : {"src", "dst", "tag", "k"}) {
    if (!args || !args->contains(key) || !(*args)[key].is_number_integer()) {
      if (why) *why = fmt::format("has no integer args.{}", key);
      return false;
    }
  }
  if (!args->contains("dir") || ((*args)["dir"] != "send" && (*args)["dir"] != "recv")) {
    if (why) *why = "has no args.dir \"send\" or \"recv\"";
    return false;
  }
  m.pid = e["pid"];
  m.tid = e["tid"];
  m.start_ns = td::us_to_ns(e["ts"].get<double>());
  m.end_ns = m.start_ns + td::us_to_ns(e["dur"].get<double>());
  m.src = (*args)["src"];
  m.dst = (*args)["dst"];
  m.tag = (*args)["tag"];
  m.k = (*args)["k"];
  m.is_send = (*args)["dir"] == "send";
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// [merge]
// ---------------------------------------------------------------------------------------

void merge_traces(const std::vector<std::string>& inputs, const std::string& output) {
  if (inputs.empty()) throw UsageError("trace merge: give at least one input trace");
  std::map<int, std::string> owner;  // pid -> the input holding it
  std::string time_base;
  std::vector<td::MessageEnd> ends;
  std::string body;
  std::string sources;
  for (const std::string& path : inputs) {
    const Document d = parse_trace(read_whole(path), path);
    const std::string base = time_base_of(d);
    if (time_base.empty()) time_base = base;
    if (base != time_base)
      throw DataError(
          fmt::format("{}: its times are {} time, those of {} are {} time; merge "
                      "traces written with the same time base",
                      path, base, inputs.front(), time_base));
    std::set<int> pids;
    for (const json& e : *d.events)
      if (e.contains("pid") && e["pid"].is_number_integer()) pids.insert(e["pid"].get<int>());
    for (int pid : pids) {
      auto [it, fresh] = owner.emplace(pid, path);
      if (!fresh)
        throw DataError(fmt::format("{}: rank {} is also in {}; give each rank's trace once", path,
                                    pid, it->second));
    }
    for (const json& e : *d.events) {
      // Our arrows are drawn again below, across files; other flows are kept as they are.
      if (is_flow(e) && e.contains("cat") && e["cat"] == td::kFlowCat) continue;
      td::MessageEnd m;
      if (message_end(e, m, nullptr)) ends.push_back(m);
      if (!body.empty()) body += ",\n";
      body += e.dump();
    }
    sources += fmt::format("{}{}", sources.empty() ? "" : ",", json(path).dump());
  }
  for (const td::FlowEvent& f : td::pair_messages(ends)) {
    if (!body.empty()) body += ",\n";
    body += td::flow_json(f);
  }
  std::string ranks;
  for (const auto& [pid, path] : owner)
    ranks += fmt::format("{}{}", ranks.empty() ? "" : ",", pid);
  write_file_atomic(
      output,
      fmt::format("{{\"traceEvents\":[\n{}\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{{"
                  "\"generator\":\"dsgd {}\",\"format\":\"{}\",\"format_version\":{},"
                  "\"time_base\":{},\"ranks\":[{}],\"merged_from\":[{}]}}}}\n",
                  body, DSGD_VERSION, td::kFormat, td::kFormatVersion, json(time_base).dump(),
                  ranks, sources));
}

// ---------------------------------------------------------------------------------------
// [check]
// ---------------------------------------------------------------------------------------

namespace {

constexpr size_t kMaxProblems = 50;

struct CheckedSlice {
  int64_t start_ns, end_ns;
  std::string name;
  int message = -1;  // index into the message ends, for p2p slices
};

struct Problems {
  std::vector<std::string> list;
  size_t more = 0;
  template <typename... Args>
  void add(fmt::format_string<Args...> f, Args&&... args) {
    if (list.size() < kMaxProblems)
      list.push_back(fmt::format(f, std::forward<Args>(args)...));
    else
      ++more;
  }
};

std::string lane_name(std::pair<int, int> lane) {
  return fmt::format("pid {} tid {}", lane.first, lane.second);
}

// Event fields that parse_trace does not check for every kind of event: read only when
// present with the right type (json's value() throws type_error for a number where a
// string was expected, and operator[] on a missing key of a const object is undefined).
std::string string_or(const json& e, const char* key, const std::string& fallback) {
  const auto it = e.find(key);
  return it != e.end() && it->is_string() ? it->get<std::string>() : fallback;
}

bool has_integer(const json& e, const char* key) {
  const auto it = e.find(key);
  return it != e.end() && it->is_number_integer();
}

}  // namespace

TraceCheck check_trace_text(std::string_view text, const std::string& name) {
  const Document d = parse_trace(text, name);
  TraceCheck r;
  Problems p;
  using LaneKey = std::pair<int, int>;
  std::set<int> pids, named_pids;
  std::set<LaneKey> named_lanes;
  std::map<LaneKey, std::vector<CheckedSlice>> lanes;
  std::map<LaneKey, std::vector<CheckedSlice>> open_b;  // "B" waiting for "E"
  std::map<LaneKey, int64_t> last_ts;
  std::vector<td::MessageEnd> ends;
  struct FlowEnds {
    std::vector<std::tuple<LaneKey, int64_t>> starts, finishes;
  };
  std::map<std::string, FlowEnds> flows;  // by cat + id

  for (size_t i = 0; i < d.events->size(); ++i) {
    const json& e = (*d.events)[i];
    const std::string ph = e["ph"];
    if (ph == "M") {
      const int pid = e["pid"];
      const std::string what = string_or(e, "name", "");
      const bool has_name = e.contains("args") && e["args"].is_object() &&
                            e["args"].contains("name") && e["args"]["name"].is_string();
      if (what == "process_name" && has_name) named_pids.insert(pid);
      if (what == "thread_name" && has_name && e.contains("tid") && e["tid"].is_number_integer())
        named_lanes.insert({pid, e["tid"].get<int>()});
      continue;
    }
    // Kinds parse_trace leaves unchecked (counters, async events...) take part only with an
    // integer pid and tid and a numeric ts, as the checked kinds always have.
    if (!has_integer(e, "pid") || !has_integer(e, "tid") || !e.contains("ts") ||
        !e["ts"].is_number())
      continue;
    const LaneKey lane{e["pid"].get<int>(), e["tid"].get<int>()};
    const int64_t ts = td::us_to_ns(e["ts"].get<double>());
    const std::string ev_name = string_or(e, "name", "?");
    if (is_flow(e)) {
      const std::string key =
          string_or(e, "cat", "") + "/" + (e.contains("id") ? e["id"].dump() : std::string("?"));
      if (ph == "s") flows[key].starts.emplace_back(lane, ts);
      if (ph == "f") flows[key].finishes.emplace_back(lane, ts);
      continue;
    }
    pids.insert(lane.first);
    // Time never runs backwards on a lane: slices and instants appear in order of start.
    if (auto it = last_ts.find(lane); it != last_ts.end() && ts < it->second)
      p.add("{}: time runs backwards at event {} '{}' ({} us after {} us)", lane_name(lane), i,
            ev_name, td::format_us(ts), td::format_us(it->second));
    last_ts[lane] = ts;
    if (ph == "X") {
      ++r.slices;
      CheckedSlice s{ts, ts + td::us_to_ns(e["dur"].get<double>()), ev_name};
      td::MessageEnd m;
      std::string why;
      if (message_end(e, m, &why)) {
        s.message = static_cast<int>(ends.size());
        ends.push_back(m);
        ++(m.is_send ? r.sends : r.receives);
      } else if (!why.empty()) {
        p.add("{}: message slice '{}' at {} us {}", lane_name(lane), ev_name, td::format_us(ts),
              why);
      }
      lanes[lane].push_back(std::move(s));
    } else if (ph == "B") {
      open_b[lane].push_back({ts, ts, ev_name});
    } else if (ph == "E") {
      if (open_b[lane].empty()) {
        p.add("{}: 'E' at {} us closes nothing", lane_name(lane), td::format_us(ts));
      } else {
        CheckedSlice s = open_b[lane].back();
        open_b[lane].pop_back();
        s.end_ns = ts;
        ++r.slices;
        lanes[lane].push_back(std::move(s));
      }
    }
  }
  for (const auto& [lane, open] : open_b)
    for (const CheckedSlice& s : open)
      p.add("{}: 'B' '{}' at {} us is never closed", lane_name(lane), s.name,
            td::format_us(s.start_ns));

  // Names: every rank and lane that has events is labelled.
  r.ranks = pids.size();
  for (int pid : pids)
    if (!named_pids.count(pid)) p.add("pid {} has no process_name metadata", pid);
  for (const auto& [lane, slices] : lanes)
    if (!named_lanes.count(lane)) p.add("{} has no thread_name metadata", lane_name(lane));

  // Nesting: on one lane two slices are disjoint or one contains the other.
  for (auto& [lane, slices] : lanes) {
    std::stable_sort(slices.begin(), slices.end(),
                     [](const CheckedSlice& a, const CheckedSlice& b) {
                       return std::tuple(a.start_ns, -a.end_ns) < std::tuple(b.start_ns, -b.end_ns);
                     });
    std::vector<const CheckedSlice*> stack;
    for (const CheckedSlice& s : slices) {
      while (!stack.empty() && stack.back()->end_ns <= s.start_ns)
        stack.pop_back();
      if (!stack.empty() && stack.back()->end_ns < s.end_ns)
        p.add("{}: '{}' [{}, {}] us overlaps '{}' [{}, {}] us without nesting", lane_name(lane),
              s.name, td::format_us(s.start_ns), td::format_us(s.end_ns), stack.back()->name,
              td::format_us(stack.back()->start_ns), td::format_us(stack.back()->end_ns));
      stack.push_back(&s);
    }
  }

  // The innermost slice on `lane` containing ts (slices are sorted and nest).
  auto enclosing = [&](const LaneKey& lane, int64_t ts) -> const CheckedSlice* {
    auto it = lanes.find(lane);
    if (it == lanes.end()) return nullptr;
    const auto& v = it->second;
    auto pos = std::upper_bound(v.begin(), v.end(), ts,
                                [](int64_t t, const CheckedSlice& s) { return t < s.start_ns; });
    while (pos != v.begin()) {
      --pos;
      if (pos->end_ns >= ts) return &*pos;
    }
    return nullptr;
  };

  // Arrows: one "s" and one "f" per id, s no later than f, leaving a send slice and
  // landing in the receive slice of the same message.
  std::vector<int> arrows(ends.size(), 0);
  for (const auto& [key, f] : flows) {
    if (f.starts.size() != 1 || f.finishes.size() != 1) {
      p.add("flow {} has {} start(s) and {} finish(es), expected one each", key, f.starts.size(),
            f.finishes.size());
      continue;
    }
    const auto& [from_lane, from_ts] = f.starts.front();
    const auto& [to_lane, to_ts] = f.finishes.front();
    if (to_ts < from_ts)
      p.add("flow {} lands at {} us, before it leaves at {} us", key, td::format_us(to_ts),
            td::format_us(from_ts));
    const CheckedSlice* from = enclosing(from_lane, from_ts);
    const CheckedSlice* to = enclosing(to_lane, to_ts);
    if (!from || from->message < 0 || !ends[from->message].is_send) {
      p.add("flow {} does not leave from a send slice ({} at {} us)", key, lane_name(from_lane),
            td::format_us(from_ts));
      continue;
    }
    if (!to || to->message < 0 || ends[to->message].is_send) {
      p.add("flow {} does not land in a receive slice ({} at {} us)", key, lane_name(to_lane),
            td::format_us(to_ts));
      continue;
    }
    const td::MessageEnd& s = ends[from->message];
    const td::MessageEnd& rv = ends[to->message];
    if (std::tuple(s.src, s.dst, s.tag, s.k) != std::tuple(rv.src, rv.dst, rv.tag, rv.k))
      p.add("flow {} joins send {}->{} tag {} #{} to receive {}->{} tag {} #{}", key, s.src, s.dst,
            s.tag, s.k, rv.src, rv.dst, rv.tag, rv.k);
    ++arrows[from->message];
    ++arrows[to->message];
    ++r.flows;
  }
  for (size_t i = 0; i < ends.size(); ++i) {
    const td::MessageEnd& m = ends[i];
    const int other = m.is_send ? m.dst : m.src;
    if (arrows[i] == 0 && !pids.count(other)) {
      ++(m.is_send ? r.external_sends : r.external_receives);
      continue;
    }
    if (arrows[i] != 1)
      p.add("{} {}->{} (tag {}, #{}) at {} us has {} arrows, expected 1",
            m.is_send ? "send" : "receive", m.src, m.dst, m.tag, m.k, td::format_us(m.start_ns),
            arrows[i]);
  }
  r.problems = std::move(p.list);
  if (p.more) r.problems.push_back(fmt::format("... and {} more problems", p.more));
  return r;
}

TraceCheck check_trace_file(const std::string& path) {
  return check_trace_text(read_whole(path), path);
}

}  // namespace dsgd
