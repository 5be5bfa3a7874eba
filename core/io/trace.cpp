// Writing Chrome traces: events -> slices per rank -> lanes where slices nest -> JSON text.
// Sections: [helpers] [slices from the fold] [lanes] [model time] [document] [writer]
// [pairing]. The slices come from the event fold (core/event_fold.h), as the GUI's do.
// Times are whole nanoseconds internally and microseconds with three decimals in the file,
// so a slice's end (ts + dur) is exact and nesting checks never meet rounding.
#include "core/io/trace.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <filesystem>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/event_fold.h"
#include "core/io/atomic_file.h"
#include "core/io/trace_detail.h"
#include "core/io/trace_summary.h"

namespace dsgd {
namespace td = trace_detail;

// ---------------------------------------------------------------------------------------
// [helpers]
// ---------------------------------------------------------------------------------------

const char* to_string(TimeBase base) {
  return base == TimeBase::model ? "model" : "wall";
}

TimeBase parse_time_base(const std::string& text) {
  if (text == "wall") return TimeBase::wall;
  if (text == "model") return TimeBase::model;
  throw UsageError(fmt::format("time base '{}': use wall or model", text));
}

namespace {

// A send whose backend reports no send_end (the buffer is free at once: an eager copy) is
// drawn this long, or up to the rank's next event if that comes sooner, so it stays visible
// without overlapping what follows.
constexpr int64_t kPostedSendNs = 1000;

std::string json_number(double v) {
  return std::isfinite(v) ? fmt::format("{}", v) : std::string("null");
}

// ---------------------------------------------------------------------------------------
// [slices from the fold]
// ---------------------------------------------------------------------------------------

enum class Group { compute = 0, comm = 1 };

struct Slice {
  int rank = 0;
  Group group = Group::compute;
  int tid = -1;  // lane, assigned by assign_lanes
  int64_t start_ns = 0, end_ns = 0;
  std::string name;
  const char* cat = "";
  std::string args;      // a JSON object
  bool p2p = false;      // a message end (kP2pCat); the others are "structural"
  bool instant = false;  // a note: an "i" event on the compute lane, not a slice
  td::MessageEnd end;
};

// Each rank's events in the order they happened, with their times in ns on the time base.
using RankEvents = std::map<int, std::vector<std::pair<int64_t, const Event*>>>;

// Every rank's events folded rank after rank, with each fed event's time and each rank's
// range of fed indices, so fold stamps map back to times on the time base.
struct Folded {
  explicit Folded(int world) : fold(world) {}
  EventFold fold;
  std::vector<int64_t> ns;
  std::vector<const Event*> events;
  std::map<int, std::pair<size_t, size_t>> range;  // rank -> [first, last) fed index
};

std::string model_args(double begin_model_s, double end_model_s) {
  std::string s;
  if (begin_model_s >= 0) s += fmt::format(",\"model_s\":{}", json_number(begin_model_s));
  if (end_model_s >= 0) s += fmt::format(",\"model_end_s\":{}", json_number(end_model_s));
  return s;
}

std::string preview_args(const Event& e) {
  if (e.preview_count == 0) return "";
  std::string s = ",\"preview\":[";
  for (int i = 0; i < e.preview_count && i < 4; ++i)
    s += fmt::format("{}{}", i ? "," : "", json_number(e.preview[i]));
  return s + "]";
}

// Where a collective's message stands in it (message_phase.h), for Perfetto's args panel.
std::string phase_args(const MessagePhase& p) {
  if (!p.collective) return "";
  std::string s =
      fmt::format(",\"collective\":{},\"phase\":{}", td::json_quote(p.collective->label),
                  td::json_quote(to_string(p.phase)));
  if (p.step >= 0) s += fmt::format(",\"step\":{},\"steps\":{}", p.step, p.steps);
  if (p.chunk >= 0) s += fmt::format(",\"chunk\":{}", p.chunk);
  if (p.segments > 1) s += fmt::format(",\"segment\":{},\"segments\":{}", p.segment, p.segments);
  if (p.contributions > 0) s += fmt::format(",\"contributions\":{}", p.contributions);
  return s;
}

// A message's phase, and whether an elastic run's round ended before it was received.
std::string message_args(const EventFold& fold, const FoldMessage& m) {
  return phase_args(fold.phase(m)) + (m.abandoned ? ",\"abandoned\":true" : "");
}

Folded fold_ranks(const RankEvents& by_rank, int world) {
  for (const auto& [rank, list] : by_rank)
    for (const auto& [t, e] : list)
      world = std::max({world, rank + 1, e->peer + 1});
  Folded d(world);
  for (const auto& [rank, list] : by_rank)
    d.fold.reserve(list.size());
  for (const auto& [rank, list] : by_rank) {
    const size_t first = d.ns.size();
    for (const auto& [t, e] : list) {
      d.fold.add(*e);
      d.ns.push_back(t);
      d.events.push_back(e);
    }
    d.range[rank] = {first, d.ns.size()};
  }
  return d;
}

// A send or receive: "X" on the communication lanes, args {dir, src, dst, tag, k, bytes}.
Slice message_slice(const FoldSlice& f, const Folded& d) {
  const bool send = f.kind == SliceKind::send;
  const int64_t t = d.ns[f.begin.event];
  Slice s{.rank = f.rank, .group = Group::comm, .start_ns = t, .cat = td::kP2pCat, .p2p = true};
  if (send && f.ended) {
    s.end_ns = std::max(d.ns[f.end.event], t);
  } else if (send) {
    // No send_end (an eager copy frees the buffer at once): drawn up to the rank's next
    // event, at most kPostedSendNs, so it stays visible without overlapping what follows.
    const size_t next = f.begin.event + 1;
    s.end_ns = std::clamp(next < d.range.at(f.rank).second ? d.ns[next] : t + kPostedSendNs, t,
                          t + kPostedSendNs);
  } else {
    s.end_ns = std::max(d.ns[f.end.event], t);
  }
  const int src = send ? f.rank : f.peer, dst = send ? f.peer : f.rank;
  s.name = fmt::format("{} {}", send ? "send to" : "recv from", f.peer);
  const Event& e = *d.events[send ? f.begin.event : f.end.event];
  s.args =
      fmt::format("{{\"dir\":\"{}\",\"src\":{},\"dst\":{},\"tag\":{},\"k\":{},\"bytes\":{}{}{}{}}}",
                  send ? "send" : "recv", src, dst, f.tag, f.k, f.bytes,
                  model_args(f.begin.model_s, send ? -1 : f.end.model_s), preview_args(e),
                  f.message >= 0 ? message_args(d.fold, d.fold.messages()[f.message]) : "");
  s.end = {.src = src, .dst = dst, .tag = f.tag, .k = f.k, .is_send = send};
  return s;
}

// A step, compute phase, collective or note that ended; or, up to `last_ns`, one still open
// when the events end (a failed run), marked unfinished.
Slice structural_slice(const FoldSlice& f, const Folded& d, int64_t last_ns) {
  const int64_t t = d.ns[f.begin.event];
  Slice s{
      .rank = f.rank, .start_ns = t, .end_ns = std::max(t, f.ended ? d.ns[f.end.event] : last_ns)};
  const std::string model = model_args(f.begin.model_s, f.end.model_s);
  switch (f.kind) {
    case SliceKind::step:
      s.name = fmt::format("step {}", f.seq);
      s.cat = td::kStepCat;
      s.args = fmt::format("{{\"step\":{}{}}}", f.seq, model);
      break;
    case SliceKind::compute:
      s.name = f.name;
      s.cat = td::kComputeCat;
      s.args = fmt::format("{{\"phase\":{}{}}}", td::json_quote(f.name), model);
      break;
    case SliceKind::collective:
      s.group = Group::comm;
      s.name = f.name;
      s.cat = td::kCollectiveCat;
      s.args = fmt::format("{{\"bytes\":{}{}}}", f.bytes, model);
      break;
    case SliceKind::recv:  // posted, never completed
      s.group = Group::comm;
      s.name = f.peer < 0 ? std::string("recv (never completed)")
                          : fmt::format("recv from {} (never completed)", f.peer);
      s.cat = td::kPendingCat;
      s.args = fmt::format("{{\"src\":{},\"tag\":{},\"unfinished\":true}}", f.peer, f.tag);
      return s;
    case SliceKind::note:
      s.name = f.name;
      s.cat = td::kNoteCat;
      // About a message (a retransmit): its peer, tag and the note's count, to read back.
      s.args = f.peer < 0
                   ? "{}"
                   : fmt::format("{{\"peer\":{},\"tag\":{},\"seq\":{}}}", f.peer, f.tag, f.seq);
      s.instant = true;
      return s;
    case SliceKind::send:
      break;
  }
  if (!f.ended || f.abandoned) s.args = "{\"unfinished\":true}";
  return s;
}

// Every rank's slices: those that ended, in the order they did, then those still open.
std::vector<Slice> slices_of(const Folded& d) {
  std::vector<Slice> out;
  const std::vector<FoldSlice>& slices = d.fold.slices();
  size_t i = 0;
  for (const auto& [rank, range] : d.range) {
    const int64_t last_ns = range.second > range.first ? d.ns[range.second - 1] : 0;
    for (; i < slices.size() && slices[i].rank == rank; ++i) {
      const FoldSlice& f = slices[i];
      const bool message = f.kind == SliceKind::send || f.kind == SliceKind::recv;
      out.push_back(message ? message_slice(f, d) : structural_slice(f, d, last_ns));
    }
    for (const FoldSlice& f : d.fold.open_slices(rank))
      out.push_back(structural_slice(f, d, last_ns));
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// [lanes]
// ---------------------------------------------------------------------------------------

struct Lane {
  int tid;
  // The slices enclosing the sweep position: their ends, and whether each is a message.
  std::vector<std::pair<int64_t, bool>> open;
  // True when [s, e] nests with every slice already on the lane, and a message (`p2p`)
  // not inside another (an arrow binds to the innermost slice at its end, so one message
  // inside another would take its arrow). Valid because slices are placed in order of
  // start (then longest first): pops what ended before s.
  bool fits(int64_t s, int64_t e, bool p2p) {
    while (!open.empty() && open.back().first <= s)
      open.pop_back();
    return open.empty() || (open.back().first >= e && !(p2p && open.back().second));
  }
};

struct LaneName {
  int rank, tid;
  std::string name;
  int sort_index;
};

// Puts each slice of one rank on a lane where it nests (Chrome and Perfetto need slices on
// one thread to nest). Steps and compute phases go on the compute lane, collectives on the
// communication lane, and messages inside their collective there too; a message that would
// straddle a collective's boundary, or overlap another without nesting (an isend still in
// flight while a recv completes), moves to an overlap lane.
void assign_lanes(int rank, std::vector<Slice*> group, Group g, int& next_tid,
                  std::vector<LaneName>& names) {
  std::sort(group.begin(), group.end(), [](const Slice* a, const Slice* b) {
    return std::tuple(a->start_ns, -a->end_ns, a->p2p) <
           std::tuple(b->start_ns, -b->end_ns, b->p2p);
  });
  std::vector<int64_t> structural_starts;
  for (const Slice* s : group)
    if (!s->p2p) structural_starts.push_back(s->start_ns);
  const int primary = g == Group::compute ? td::kComputeTid : td::kCommTid;
  const char* overlap_name = g == Group::compute ? "compute (overlap)" : "communication (overlap)";
  std::vector<Lane> lanes{{primary, {}}};
  for (Slice* s : group) {
    size_t first = 0;
    if (s->p2p) {
      auto next = std::upper_bound(structural_starts.begin(), structural_starts.end(), s->start_ns);
      if (next != structural_starts.end() && *next < s->end_ns) first = 1;
    }
    size_t lane = first;
    while (lane < lanes.size() && !lanes[lane].fits(s->start_ns, s->end_ns, s->p2p))
      ++lane;
    if (lane == lanes.size()) {
      const int tid = next_tid++;
      lanes.push_back({tid, {}});
      names.push_back({rank, tid, overlap_name, (g == Group::compute ? 0 : 100) + tid});
    }
    lanes[lane].open.emplace_back(s->end_ns, s->p2p);
    s->tid = lanes[lane].tid;
  }
}

// ---------------------------------------------------------------------------------------
// [model time]
// ---------------------------------------------------------------------------------------

// Model time leaves many events at one instant (an ideal link delivers in zero model time),
// and slices of zero length at one instant cannot be told apart by a viewer or an arrow.
// So ties are broken in causal order, by kModelTieNs steps: each event comes at least
// kModelTieNs after the previous event of its rank, and a receive at least kModelTieNs
// after its send. Events are visited in wall order, which is causal within one process.
constexpr int64_t kModelTieNs = 10;

void to_model_time(std::map<int, std::vector<std::pair<int64_t, const Event*>>>& by_rank) {
  struct Ref {
    int64_t wall_ns;
    int rank;
    size_t index;
  };
  std::vector<Ref> order;
  for (const auto& [rank, list] : by_rank)
    for (size_t i = 0; i < list.size(); ++i)
      order.push_back({list[i].first, rank, i});
  std::stable_sort(order.begin(), order.end(),
                   [](const Ref& a, const Ref& b) { return a.wall_ns < b.wall_ns; });
  std::map<int, int64_t> last;                                         // rank -> its last time
  std::map<std::tuple<int, int, int>, std::deque<int64_t>> in_flight;  // (src, dst, tag)
  for (const Ref& ref : order) {
    auto& [t, e] = by_rank[ref.rank][ref.index];
    t = std::llround(e->model_s * 1e9);
    if (auto it = last.find(ref.rank); it != last.end()) t = std::max(t, it->second + kModelTieNs);
    if (e->kind == EventKind::send_begin) in_flight[{ref.rank, e->peer, e->tag}].push_back(t);
    if (e->kind == EventKind::recv_end) {
      auto& q = in_flight[{e->peer, ref.rank, e->tag}];
      if (!q.empty()) {
        t = std::max(t, q.front() + kModelTieNs);
        q.pop_front();
      }
    }
    last[ref.rank] = t;
  }
}

// ---------------------------------------------------------------------------------------
// [document]
// ---------------------------------------------------------------------------------------

// Per rank, in the order they happened: by wall time (stable: one thread's equal times keep
// their order), which is also the order of emission for model time. Events of no rank are
// counted in `dropped`.
RankEvents order_by_rank(const std::vector<Event>& events, TimeBase base, size_t& dropped) {
  RankEvents by_rank;
  for (const Event& e : events) {
    if (e.rank < 0) {
      ++dropped;
      continue;
    }
    if (base == TimeBase::model && !(e.model_s >= 0))
      throw UsageError(
          fmt::format("trace: model time requested, but rank {}'s {} event has none; this backend "
                      "reports wall time only: use the wall time base",
                      e.rank, to_string(e.kind)));
    by_rank[e.rank].emplace_back(std::llround(e.wall_s * 1e9), &e);
  }
  for (auto& [rank, list] : by_rank)
    std::stable_sort(list.begin(), list.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  if (base == TimeBase::model) to_model_time(by_rank);
  return by_rank;
}

// Puts every slice on a lane (sorting them by rank, lane and time) and names the lanes.
std::vector<LaneName> assign_all_lanes(std::vector<Slice>& all, const RankEvents& by_rank) {
  std::vector<LaneName> lane_names;
  std::map<int, std::pair<std::vector<Slice*>, std::vector<Slice*>>> groups;  // compute, comm
  for (Slice& s : all) {
    if (s.instant)
      s.tid = td::kComputeTid;
    else
      (s.group == Group::compute ? groups[s.rank].first : groups[s.rank].second).push_back(&s);
  }
  for (const auto& [rank, list] : by_rank) {
    lane_names.push_back({rank, td::kComputeTid, "compute", 0});
    lane_names.push_back({rank, td::kCommTid, "communication", 100});
    int next_tid = 2;
    assign_lanes(rank, groups[rank].first, Group::compute, next_tid, lane_names);
    assign_lanes(rank, groups[rank].second, Group::comm, next_tid, lane_names);
  }
  std::sort(all.begin(), all.end(), [](const Slice& a, const Slice& b) {
    return std::tuple(a.rank, a.tid, a.start_ns, -a.end_ns) <
           std::tuple(b.rank, b.tid, b.start_ns, -b.end_ns);
  });
  return lane_names;
}

std::string metadata(const char* what, int pid, int tid, const std::string& args) {
  return fmt::format("{{\"name\":\"{}\",\"ph\":\"M\",\"pid\":{},\"tid\":{},\"args\":{}}}", what,
                     pid, tid, args);
}

// The "traceEvents" lines: process and lane names, slices and notes, then the arrows.
std::vector<std::string> event_lines(const std::vector<Slice>& all,
                                     const std::vector<LaneName>& lane_names,
                                     const RankEvents& by_rank) {
  std::vector<std::string> lines;
  for (const auto& [rank, list] : by_rank) {
    lines.push_back(
        metadata("process_name", rank, 0, fmt::format("{{\"name\":\"rank {}\"}}", rank)));
    lines.push_back(
        metadata("process_sort_index", rank, 0, fmt::format("{{\"sort_index\":{}}}", rank)));
  }
  for (const LaneName& n : lane_names) {
    lines.push_back(metadata("thread_name", n.rank, n.tid,
                             fmt::format("{{\"name\":{}}}", td::json_quote(n.name))));
    lines.push_back(metadata("thread_sort_index", n.rank, n.tid,
                             fmt::format("{{\"sort_index\":{}}}", n.sort_index)));
  }
  std::vector<td::MessageEnd> ends;
  for (const Slice& s : all) {
    if (s.instant) {
      lines.push_back(
          fmt::format("{{\"name\":{},\"cat\":\"{}\",\"ph\":\"i\",\"s\":\"t\",\"pid\":{},\"tid\":{},"
                      "\"ts\":{}{}}}",
                      td::json_quote(s.name), s.cat, s.rank, s.tid, td::format_us(s.start_ns),
                      s.args == "{}" ? "" : ",\"args\":" + s.args));
      continue;
    }
    lines.push_back(fmt::format(
        "{{\"name\":{},\"cat\":\"{}\",\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},"
        "\"args\":{}}}",
        td::json_quote(s.name), s.cat, s.rank, s.tid, td::format_us(s.start_ns),
        td::format_us(s.end_ns - s.start_ns), s.args));
    if (s.p2p) {
      td::MessageEnd m = s.end;
      m.pid = s.rank;
      m.tid = s.tid;
      m.start_ns = s.start_ns;
      m.end_ns = s.end_ns;
      ends.push_back(m);
    }
  }
  for (const td::FlowEvent& f : td::pair_messages(ends))
    lines.push_back(td::flow_json(f));
  return lines;
}

}  // namespace

std::string trace_json(const std::vector<Event>& events, const TraceOptions& options) {
  size_t dropped = 0;
  const RankEvents by_rank = order_by_rank(events, options.time_base, dropped);
  std::vector<Slice> all = slices_of(fold_ranks(by_rank, options.world));
  const std::vector<LaneName> lane_names = assign_all_lanes(all, by_rank);
  std::string out = "{\"traceEvents\":[\n";
  bool first = true;
  for (const std::string& line : event_lines(all, lane_names, by_rank)) {
    if (!first) out += ",\n";
    first = false;
    out += line;
  }
  std::string ranks;
  for (const auto& [rank, list] : by_rank)
    ranks += fmt::format("{}{}", ranks.empty() ? "" : ",", rank);
  out += fmt::format(
      "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{{\"generator\":\"dsgd {}\",\"format\":"
      "\"{}\",\"format_version\":{},\"time_base\":\"{}\",\"ranks\":[{}],\"events\":{},"
      "\"dropped_events\":{}{}{}}}}}\n",
      DSGD_VERSION, td::kFormat, td::kFormatVersion, to_string(options.time_base), ranks,
      events.size(), dropped, options.run_json.empty() ? "" : ",\"run\":" + options.run_json,
      options.summary.ranks > 0 ? fmt::format(",\"summary\":{{\"ranks\":{},\"groups\":{}}}",
                                              options.summary.ranks, options.summary.groups)
                                : "");
  return out;
}

// ---------------------------------------------------------------------------------------
// [writer]
// ---------------------------------------------------------------------------------------

void ChromeTraceWriter::on_event(const Event& event) {
  std::lock_guard lock(mutex_);
  events_.push_back(event);
}

void ChromeTraceWriter::set_world(int world) {
  std::lock_guard lock(mutex_);
  options_.world = world;
}

void ChromeTraceWriter::set_lane_groups(int groups) {
  std::lock_guard lock(mutex_);
  groups_ = groups;
}

size_t ChromeTraceWriter::size() const {
  std::lock_guard lock(mutex_);
  return events_.size();
}

void ChromeTraceWriter::write(const std::string& path) const {
  std::vector<Event> events;
  TraceOptions options;
  int groups = 0;
  {
    std::lock_guard lock(mutex_);
    events = events_;
    options = options_;
    groups = groups_;
  }
  if (options.world == 0)
    for (const Event& e : events)
      options.world = std::max({options.world, e.rank + 1, e.peer + 1});
  if (groups > 0 && options.world > groups) {
    events = summarize_events(events, options.world, groups);
    options.summary = {.ranks = options.world, .groups = groups};
    options.world = groups;
  }
  write_file_atomic(path, trace_json(events, options));
}

// ---------------------------------------------------------------------------------------
// [pairing]
// ---------------------------------------------------------------------------------------

namespace trace_detail {

std::vector<FlowEvent> pair_messages(const std::vector<MessageEnd>& ends) {
  using Key = std::tuple<int, int, int, uint64_t>;
  std::map<Key, const MessageEnd*> receives;
  for (const MessageEnd& m : ends)
    if (!m.is_send) receives.emplace(Key{m.src, m.dst, m.tag, m.k}, &m);
  std::vector<const MessageEnd*> sends;
  for (const MessageEnd& m : ends)
    if (m.is_send) sends.push_back(&m);
  std::stable_sort(sends.begin(), sends.end(), [](const MessageEnd* a, const MessageEnd* b) {
    return a->start_ns < b->start_ns;
  });
  std::vector<FlowEvent> flows;
  uint64_t id = 0;
  for (const MessageEnd* s : sends) {
    auto it = receives.find(Key{s->src, s->dst, s->tag, s->k});
    if (it == receives.end()) continue;  // the receiver is in another file, or never got it
    const MessageEnd* r = it->second;
    // Just inside both slices (at most 0.5 us in), so each end binds to its slice.
    int64_t from = s->start_ns + std::min<int64_t>((s->end_ns - s->start_ns) / 2, 500);
    int64_t to = r->end_ns - std::min<int64_t>((r->end_ns - r->start_ns) / 2, 500);
    if (to < from) {
      from = s->start_ns;
      to = r->end_ns;
    }
    ++id;
    flows.push_back({id, true, s->pid, s->tid, from});
    flows.push_back({id, false, r->pid, r->tid, to});
  }
  return flows;
}

std::string format_us(int64_t ns) {
  const uint64_t mag = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  return fmt::format("{}{}.{:03}", ns < 0 ? "-" : "", mag / 1000, mag % 1000);
}

int64_t us_to_ns(double us) {
  return std::llround(us * 1000.0);
}

std::string flow_json(const FlowEvent& f) {
  return fmt::format(
      "{{\"name\":\"message\",\"cat\":\"{}\",\"ph\":\"{}\",\"bp\":\"e\",\"id\":{},\"pid\":{},"
      "\"tid\":{},\"ts\":{}}}",
      kFlowCat, f.start ? "s" : "f", f.id, f.pid, f.tid, format_us(f.ts_ns));
}

std::string json_quote(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          out += fmt::format("\\u{:04x}", static_cast<int>(c));
        else
          out += c;
    }
  }
  return out + "\"";
}

}  // namespace trace_detail
std::string per_rank_path(const std::string& path, int rank) {
  const std::filesystem::path p(path);
  std::filesystem::path out = p;
  out.replace_filename(fmt::format("{}.rank{}{}", p.stem().string(), rank, p.extension().string()));
  return out.string();
}

}  // namespace dsgd
