// Writing Chrome traces: events -> slices per rank -> lanes where slices nest -> JSON text.
// Sections: [helpers] [slices from events] [lanes] [document] [writer] [pairing].
// Times are whole nanoseconds internally and microseconds with three decimals in the file,
// so a slice's end (ts + dur) is exact and nesting checks never meet rounding.
#include "core/io/trace.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/io/atomic_file.h"
#include "core/io/trace_detail.h"

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
// [slices from events]
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

struct Open {
  const char* op;
  int64_t start_ns;
  double model_s;
  uint64_t seq;
  uint64_t bytes;
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

// Pops the innermost open entry named op (a mismatched end closes what it names).
std::optional<Open> pop_named(std::vector<Open>& stack, const char* op) {
  for (size_t i = stack.size(); i-- > 0;) {
    if (std::strcmp(stack[i].op, op) == 0) {
      Open o = stack[i];
      stack.erase(stack.begin() + static_cast<std::ptrdiff_t>(i));
      return o;
    }
  }
  return std::nullopt;
}

// One rank's events, in the order they happened, into slices.
void rank_slices(int rank, std::vector<std::pair<int64_t, const Event*>>& events,
                 std::vector<Slice>& out) {
  std::vector<Open> steps, computes, collectives;
  struct OpenSend {
    size_t slice;
    int peer, tag;
  };
  struct OpenRecv {
    int peer, tag;
    int64_t start_ns;
    double model_s;
  };
  std::vector<OpenSend> sends_without_end;
  std::vector<OpenRecv> recvs;
  std::map<std::pair<int, int>, uint64_t> sent, received;  // (peer, tag) -> count
  const int64_t last_ns = events.empty() ? 0 : events.back().first;

  auto add = [&](Group g, int64_t start, int64_t end, std::string name, const char* cat,
                 std::string args) -> Slice& {
    Slice s{.rank = rank, .group = g, .start_ns = start, .end_ns = std::max(start, end)};
    s.name = std::move(name);
    s.cat = cat;
    s.args = std::move(args);
    out.push_back(std::move(s));
    return out.back();
  };

  for (size_t i = 0; i < events.size(); ++i) {
    const int64_t t = events[i].first;
    const Event& e = *events[i].second;
    switch (e.kind) {
      case EventKind::step_begin:
        steps.push_back({"step", t, e.model_s, e.seq, 0});
        break;
      case EventKind::step_end: {
        auto it =
            std::find_if(steps.begin(), steps.end(), [&](const Open& o) { return o.seq == e.seq; });
        if (it == steps.end()) break;  // began before the trace did
        add(Group::compute, it->start_ns, t, fmt::format("step {}", e.seq), "step",
            fmt::format("{{\"step\":{}{}}}", e.seq, model_args(it->model_s, e.model_s)));
        steps.erase(it);
        break;
      }
      case EventKind::compute_begin:
        computes.push_back({e.op, t, e.model_s, 0, 0});
        break;
      case EventKind::compute_end:
        if (auto o = pop_named(computes, e.op))
          add(Group::compute, o->start_ns, t, e.op, "compute",
              fmt::format("{{\"phase\":{}{}}}", td::json_quote(e.op),
                          model_args(o->model_s, e.model_s)));
        break;
      case EventKind::collective_begin:
        collectives.push_back({e.op, t, e.model_s, 0, e.bytes});
        break;
      case EventKind::collective_end:
        if (auto o = pop_named(collectives, e.op))
          add(Group::comm, o->start_ns, t, e.op, "collective",
              fmt::format("{{\"bytes\":{}{}}}", o->bytes, model_args(o->model_s, e.model_s)));
        break;
      case EventKind::send_begin: {
        const uint64_t k = sent[{e.peer, e.tag}]++;
        Slice& s = add(Group::comm, t, t, fmt::format("send to {}", e.peer), td::kP2pCat,
                       fmt::format("{{\"dir\":\"send\",\"src\":{},\"dst\":{},\"tag\":{},\"k\":{},"
                                   "\"bytes\":{}{}{}}}",
                                   rank, e.peer, e.tag, k, e.bytes, model_args(e.model_s, -1),
                                   preview_args(e)));
        s.p2p = true;
        s.end = {.src = rank, .dst = e.peer, .tag = e.tag, .k = k, .is_send = true};
        // Until its send_end arrives (if ever): drawn up to the next event, at most kPostedSendNs.
        const int64_t next = i + 1 < events.size() ? events[i + 1].first : t + kPostedSendNs;
        s.end_ns = std::clamp(next, t, t + kPostedSendNs);
        sends_without_end.push_back({out.size() - 1, e.peer, e.tag});
        break;
      }
      case EventKind::send_end: {
        // Sends to one peer with one tag complete in order: the oldest open one ends here.
        auto it =
            std::find_if(sends_without_end.begin(), sends_without_end.end(),
                         [&](const OpenSend& o) { return o.peer == e.peer && o.tag == e.tag; });
        if (it == sends_without_end.end()) break;
        out[it->slice].end_ns = std::max(t, out[it->slice].start_ns);
        sends_without_end.erase(it);
        break;
      }
      case EventKind::recv_begin:
        recvs.push_back({e.peer, e.tag, t, e.model_s});
        break;
      case EventKind::recv_end: {
        // The oldest posted receive this message could satisfy; a recv_end without one (a
        // backend that reports completions only) is drawn as an instant receive.
        auto it = std::find_if(recvs.begin(), recvs.end(), [&](const OpenRecv& o) {
          return o.tag == e.tag && (o.peer == e.peer || o.peer == -1);
        });
        int64_t start = t;
        double start_model = e.model_s;
        if (it != recvs.end()) {
          start = it->start_ns;
          start_model = it->model_s;
          recvs.erase(it);
        }
        const uint64_t k = received[{e.peer, e.tag}]++;
        Slice& s = add(Group::comm, start, t, fmt::format("recv from {}", e.peer), td::kP2pCat,
                       fmt::format("{{\"dir\":\"recv\",\"src\":{},\"dst\":{},\"tag\":{},\"k\":{},"
                                   "\"bytes\":{}{}{}}}",
                                   e.peer, rank, e.tag, k, e.bytes,
                                   model_args(start_model, e.model_s), preview_args(e)));
        s.p2p = true;
        s.end = {.src = e.peer, .dst = rank, .tag = e.tag, .k = k, .is_send = false};
        break;
      }
      case EventKind::note:
        add(Group::compute, t, t, e.op, "note", "{}").instant = true;
        break;
    }
  }
  // Whatever is still open when the trace ends (a failed run) is drawn up to the last event.
  constexpr const char* kUnfinished = "{\"unfinished\":true}";
  for (const Open& o : steps)
    add(Group::compute, o.start_ns, last_ns, fmt::format("step {}", o.seq), "step", kUnfinished);
  for (const Open& o : computes)
    add(Group::compute, o.start_ns, last_ns, o.op, "compute", kUnfinished);
  for (const Open& o : collectives)
    add(Group::comm, o.start_ns, last_ns, o.op, "collective", kUnfinished);
  for (const OpenRecv& o : recvs)
    add(Group::comm, o.start_ns, last_ns,
        o.peer < 0 ? std::string("recv (never completed)")
                   : fmt::format("recv from {} (never completed)", o.peer),
        "pending", fmt::format("{{\"src\":{},\"tag\":{},\"unfinished\":true}}", o.peer, o.tag));
}

// ---------------------------------------------------------------------------------------
// [lanes]
// ---------------------------------------------------------------------------------------

struct Lane {
  int tid;
  std::vector<int64_t> open_ends;  // ends of the slices enclosing the sweep position
  // True when [s, e] nests with every slice already on the lane. Valid because slices are
  // placed in order of start (then longest first): pops what ended before s.
  bool fits(int64_t s, int64_t e) {
    while (!open_ends.empty() && open_ends.back() <= s)
      open_ends.pop_back();
    return open_ends.empty() || open_ends.back() >= e;
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
    while (lane < lanes.size() && !lanes[lane].fits(s->start_ns, s->end_ns))
      ++lane;
    if (lane == lanes.size()) {
      const int tid = next_tid++;
      lanes.push_back({tid, {}});
      names.push_back({rank, tid, overlap_name, (g == Group::compute ? 0 : 100) + tid});
      lanes.back().fits(s->start_ns, s->end_ns);
    }
    lanes[lane].open_ends.push_back(s->end_ns);
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

std::string metadata(const char* what, int pid, int tid, const std::string& args) {
  return fmt::format("{{\"name\":\"{}\",\"ph\":\"M\",\"pid\":{},\"tid\":{},\"args\":{}}}", what,
                     pid, tid, args);
}

}  // namespace

std::string trace_json(const std::vector<Event>& events, const TraceOptions& options) {
  // Per rank, in the order they happened: by wall time (stable: one thread's equal times
  // keep their order), which is also the order of emission for model time.
  std::map<int, std::vector<std::pair<int64_t, const Event*>>> by_rank;
  size_t dropped = 0;
  for (const Event& e : events) {
    if (e.rank < 0) {
      ++dropped;
      continue;
    }
    if (options.time_base == TimeBase::model && !(e.model_s >= 0))
      throw UsageError(
          fmt::format("trace: model time requested, but rank {}'s {} event has none; this backend "
                      "reports wall time only: use the wall time base",
                      e.rank, to_string(e.kind)));
    by_rank[e.rank].emplace_back(std::llround(e.wall_s * 1e9), &e);
  }
  for (auto& [rank, list] : by_rank)
    std::stable_sort(list.begin(), list.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  if (options.time_base == TimeBase::model) to_model_time(by_rank);
  std::vector<Slice> all;
  std::map<int, std::pair<size_t, size_t>> rank_range;  // [first, last) of all
  for (auto& [rank, list] : by_rank) {
    const size_t first = all.size();
    rank_slices(rank, list, all);
    rank_range[rank] = {first, all.size()};
  }
  std::vector<LaneName> lane_names;
  for (const auto& [rank, list] : by_rank) {
    lane_names.push_back({rank, td::kComputeTid, "compute", 0});
    lane_names.push_back({rank, td::kCommTid, "communication", 100});
    std::vector<Slice*> compute, comm;
    for (size_t i = rank_range[rank].first; i < rank_range[rank].second; ++i) {
      Slice& s = all[i];
      if (s.instant)
        s.tid = td::kComputeTid;
      else
        (s.group == Group::compute ? compute : comm).push_back(&s);
    }
    int next_tid = 2;
    assign_lanes(rank, compute, Group::compute, next_tid, lane_names);
    assign_lanes(rank, comm, Group::comm, next_tid, lane_names);
  }
  std::sort(all.begin(), all.end(), [](const Slice& a, const Slice& b) {
    return std::tuple(a.rank, a.tid, a.start_ns, -a.end_ns) <
           std::tuple(b.rank, b.tid, b.start_ns, -b.end_ns);
  });

  std::string out = "{\"traceEvents\":[\n";
  bool first = true;
  auto line = [&](const std::string& json) {
    if (!first) out += ",\n";
    first = false;
    out += json;
  };
  for (const auto& [rank, list] : by_rank) {
    line(metadata("process_name", rank, 0, fmt::format("{{\"name\":\"rank {}\"}}", rank)));
    line(metadata("process_sort_index", rank, 0, fmt::format("{{\"sort_index\":{}}}", rank)));
  }
  for (const LaneName& n : lane_names) {
    line(metadata("thread_name", n.rank, n.tid,
                  fmt::format("{{\"name\":{}}}", td::json_quote(n.name))));
    line(metadata("thread_sort_index", n.rank, n.tid,
                  fmt::format("{{\"sort_index\":{}}}", n.sort_index)));
  }
  std::vector<td::MessageEnd> ends;
  for (const Slice& s : all) {
    if (s.instant) {
      line(
          fmt::format("{{\"name\":{},\"cat\":\"note\",\"ph\":\"i\",\"s\":\"t\",\"pid\":{},\"tid\":{"
                      "},\"ts\":{}}}",
                      td::json_quote(s.name), s.rank, s.tid, td::format_us(s.start_ns)));
      continue;
    }
    line(fmt::format(
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
    line(td::flow_json(f));

  std::string ranks;
  for (const auto& [rank, list] : by_rank)
    ranks += fmt::format("{}{}", ranks.empty() ? "" : ",", rank);
  out += fmt::format(
      "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{{\"generator\":\"dsgd {}\",\"format\":"
      "\"{}\",\"format_version\":{},\"time_base\":\"{}\",\"ranks\":[{}],\"events\":{},"
      "\"dropped_events\":{}}}}}\n",
      DSGD_VERSION, td::kFormat, td::kFormatVersion, to_string(options.time_base), ranks,
      events.size(), dropped);
  return out;
}

// ---------------------------------------------------------------------------------------
// [writer]
// ---------------------------------------------------------------------------------------

void ChromeTraceWriter::on_event(const Event& event) {
  std::lock_guard lock(mutex_);
  events_.push_back(event);
}

size_t ChromeTraceWriter::size() const {
  std::lock_guard lock(mutex_);
  return events_.size();
}

void ChromeTraceWriter::write(const std::string& path) const {
  std::vector<Event> events;
  {
    std::lock_guard lock(mutex_);
    events = events_;
  }
  write_file_atomic(path, trace_json(events, options_));
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
}  // namespace dsgd
