// Checking a Chrome trace's consistency: every rank and lane named, time never running
// backwards on a lane, slices nesting, one arrow per message from its send slice into its
// receive slice. Reads any Chrome trace; knows dsgd's message slices (trace_document.h).
// Sections: [collect] [checks] [entry points].
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "core/io/trace.h"
#include "core/io/trace_document.h"

namespace dsgd {
namespace td = trace_detail;
using Json = td::json;  // not `json`: other files mean nlohmann::json by it

namespace {

constexpr size_t kMaxProblems = 50;

using LaneKey = std::pair<int, int>;  // pid, tid

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

struct FlowEnds {
  std::vector<std::tuple<LaneKey, int64_t>> starts, finishes;
};

// What one pass over the events collects for the checks.
struct Collected {
  std::set<int> pids, named_pids;
  std::set<LaneKey> named_lanes;
  std::map<LaneKey, std::vector<CheckedSlice>> lanes;
  std::map<LaneKey, std::vector<CheckedSlice>> open_b;  // "B" waiting for "E"
  std::map<LaneKey, int64_t> last_ts;
  std::vector<td::MessageEnd> ends;
  std::map<std::string, FlowEnds> flows;  // by cat + id
};

std::string lane_name(LaneKey lane) {
  return fmt::format("pid {} tid {}", lane.first, lane.second);
}

// Event fields that parse_trace does not check for every kind of event: read only when
// present with the right type (json's value() throws type_error for a number where a
// string was expected, and operator[] on a missing key of a const object is undefined).
std::string string_or(const Json& e, const char* key, const std::string& fallback) {
  const auto it = e.find(key);
  return it != e.end() && it->is_string() ? it->get<std::string>() : fallback;
}

bool has_integer(const Json& e, const char* key) {
  const auto it = e.find(key);
  return it != e.end() && it->is_number_integer();
}

// ---------------------------------------------------------------------------------------
// [collect]
// ---------------------------------------------------------------------------------------

void collect_metadata(const Json& e, Collected& c) {
  const int pid = e["pid"];
  const std::string what = string_or(e, "name", "");
  const bool has_name = e.contains("args") && e["args"].is_object() && e["args"].contains("name") &&
                        e["args"]["name"].is_string();
  if (what == "process_name" && has_name) c.named_pids.insert(pid);
  if (what == "thread_name" && has_name && has_integer(e, "tid"))
    c.named_lanes.insert({pid, e["tid"].get<int>()});
}

// A slice ("X", or "B" and "E") on its lane; message slices also into c.ends.
void collect_slice(const Json& e, const std::string& ph, LaneKey lane, int64_t ts,
                   const std::string& name, Collected& c, TraceCheck& r, Problems& p) {
  if (ph == "X") {
    ++r.slices;
    CheckedSlice s{ts, ts + td::us_to_ns(e["dur"].get<double>()), name};
    td::MessageEnd m;
    std::string why;
    if (td::message_end(e, m, &why)) {
      s.message = static_cast<int>(c.ends.size());
      c.ends.push_back(m);
      ++(m.is_send ? r.sends : r.receives);
    } else if (!why.empty()) {
      p.add("{}: message slice '{}' at {} us {}", lane_name(lane), name, td::format_us(ts), why);
    }
    c.lanes[lane].push_back(std::move(s));
  } else if (ph == "B") {
    c.open_b[lane].push_back({ts, ts, name});
  } else if (ph == "E") {
    if (c.open_b[lane].empty()) {
      p.add("{}: 'E' at {} us closes nothing", lane_name(lane), td::format_us(ts));
      return;
    }
    CheckedSlice s = c.open_b[lane].back();
    c.open_b[lane].pop_back();
    s.end_ns = ts;
    ++r.slices;
    c.lanes[lane].push_back(std::move(s));
  }
}

Collected collect(const td::Document& d, TraceCheck& r, Problems& p) {
  Collected c;
  for (size_t i = 0; i < d.events->size(); ++i) {
    const Json& e = (*d.events)[i];
    const std::string ph = e["ph"];
    if (ph == "M") {
      collect_metadata(e, c);
      continue;
    }
    // Kinds parse_trace leaves unchecked (counters, async events...) take part only with an
    // integer pid and tid and a numeric ts, as the checked kinds always have.
    if (!has_integer(e, "pid") || !has_integer(e, "tid") || !e.contains("ts") ||
        !e["ts"].is_number())
      continue;
    const LaneKey lane{e["pid"].get<int>(), e["tid"].get<int>()};
    const int64_t ts = td::us_to_ns(e["ts"].get<double>());
    const std::string name = string_or(e, "name", "?");
    if (td::is_flow(e)) {
      const std::string key =
          string_or(e, "cat", "") + "/" + (e.contains("id") ? e["id"].dump() : std::string("?"));
      if (ph == "s") c.flows[key].starts.emplace_back(lane, ts);
      if (ph == "f") c.flows[key].finishes.emplace_back(lane, ts);
      continue;
    }
    c.pids.insert(lane.first);
    // Time never runs backwards on a lane: slices and instants appear in order of start.
    if (auto it = c.last_ts.find(lane); it != c.last_ts.end() && ts < it->second)
      p.add("{}: time runs backwards at event {} '{}' ({} us after {} us)", lane_name(lane), i,
            name, td::format_us(ts), td::format_us(it->second));
    c.last_ts[lane] = ts;
    collect_slice(e, ph, lane, ts, name, c, r, p);
  }
  for (const auto& [lane, open] : c.open_b)
    for (const CheckedSlice& s : open)
      p.add("{}: 'B' '{}' at {} us is never closed", lane_name(lane), s.name,
            td::format_us(s.start_ns));
  return c;
}

// ---------------------------------------------------------------------------------------
// [checks]
// ---------------------------------------------------------------------------------------

// Every rank and lane that has events is labelled.
void check_names(const Collected& c, Problems& p) {
  for (int pid : c.pids)
    if (!c.named_pids.count(pid)) p.add("pid {} has no process_name metadata", pid);
  for (const auto& [lane, slices] : c.lanes)
    if (!c.named_lanes.count(lane)) p.add("{} has no thread_name metadata", lane_name(lane));
}

// On one lane two slices are disjoint or one contains the other. Sorts each lane.
void check_nesting(Collected& c, Problems& p) {
  for (auto& [lane, slices] : c.lanes) {
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
}

// The innermost slice on `lane` containing ts (the lane is sorted and nests).
const CheckedSlice* enclosing(const Collected& c, const LaneKey& lane, int64_t ts) {
  auto it = c.lanes.find(lane);
  if (it == c.lanes.end()) return nullptr;
  const auto& v = it->second;
  auto pos = std::upper_bound(v.begin(), v.end(), ts,
                              [](int64_t t, const CheckedSlice& s) { return t < s.start_ns; });
  while (pos != v.begin()) {
    --pos;
    if (pos->end_ns >= ts) return &*pos;
  }
  return nullptr;
}

// One arrow: one "s" and one "f", s no later than f, leaving a send slice and landing in the
// receive slice of the same message. Counts the arrows at each message end.
void check_arrow(const Collected& c, const std::string& key, const FlowEnds& f,
                 std::vector<int>& arrows, TraceCheck& r, Problems& p) {
  if (f.starts.size() != 1 || f.finishes.size() != 1) {
    p.add("flow {} has {} start(s) and {} finish(es), expected one each", key, f.starts.size(),
          f.finishes.size());
    return;
  }
  const auto& [from_lane, from_ts] = f.starts.front();
  const auto& [to_lane, to_ts] = f.finishes.front();
  if (to_ts < from_ts)
    p.add("flow {} lands at {} us, before it leaves at {} us", key, td::format_us(to_ts),
          td::format_us(from_ts));
  const CheckedSlice* from = enclosing(c, from_lane, from_ts);
  const CheckedSlice* to = enclosing(c, to_lane, to_ts);
  if (!from || from->message < 0 || !c.ends[from->message].is_send) {
    p.add("flow {} does not leave from a send slice ({} at {} us)", key, lane_name(from_lane),
          td::format_us(from_ts));
    return;
  }
  if (!to || to->message < 0 || c.ends[to->message].is_send) {
    p.add("flow {} does not land in a receive slice ({} at {} us)", key, lane_name(to_lane),
          td::format_us(to_ts));
    return;
  }
  const td::MessageEnd& s = c.ends[from->message];
  const td::MessageEnd& rv = c.ends[to->message];
  if (std::tuple(s.src, s.dst, s.tag, s.k) != std::tuple(rv.src, rv.dst, rv.tag, rv.k))
    p.add("flow {} joins send {}->{} tag {} #{} to receive {}->{} tag {} #{}", key, s.src, s.dst,
          s.tag, s.k, rv.src, rv.dst, rv.tag, rv.k);
  ++arrows[from->message];
  ++arrows[to->message];
  ++r.flows;
}

// Every message end has exactly one arrow, unless its other end is in another file.
void check_arrows(const Collected& c, TraceCheck& r, Problems& p) {
  std::vector<int> arrows(c.ends.size(), 0);
  for (const auto& [key, f] : c.flows)
    check_arrow(c, key, f, arrows, r, p);
  for (size_t i = 0; i < c.ends.size(); ++i) {
    const td::MessageEnd& m = c.ends[i];
    const int other = m.is_send ? m.dst : m.src;
    if (arrows[i] == 0 && m.abandoned) continue;  // its round ended before it was received
    if (arrows[i] == 0 && !c.pids.count(other)) {
      ++(m.is_send ? r.external_sends : r.external_receives);
      continue;
    }
    if (arrows[i] != 1)
      p.add("{} {}->{} (tag {}, #{}) at {} us has {} arrows, expected 1",
            m.is_send ? "send" : "receive", m.src, m.dst, m.tag, m.k, td::format_us(m.start_ns),
            arrows[i]);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------
// [entry points]
// ---------------------------------------------------------------------------------------

TraceCheck check_trace_text(std::string_view text, const std::string& name) {
  const td::Document d = td::parse_trace(text, name);
  TraceCheck r;
  Problems p;
  Collected c = collect(d, r, p);
  r.ranks = c.pids.size();
  check_names(c, p);
  check_nesting(c, p);
  check_arrows(c, r, p);
  r.problems = std::move(p.list);
  if (p.more) r.problems.push_back(fmt::format("... and {} more problems", p.more));
  return r;
}

TraceCheck check_trace_file(const std::string& path) {
  return check_trace_text(td::read_whole(path), path);
}

}  // namespace dsgd
