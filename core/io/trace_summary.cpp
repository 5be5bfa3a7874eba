#include "core/io/trace_summary.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/event_fold.h"

namespace dsgd {

int summary_groups_for(int requested, int ranks) {
  if (requested < 0) return ranks > kMaxTraceLanes ? kSummaryGroups : 0;
  return requested < ranks ? requested : 0;
}

int summary_group(int rank, int ranks, int groups) {
  return static_cast<int>(int64_t(rank) * groups / ranks);
}

int summary_group_first(int group, int ranks, int groups) {
  return static_cast<int>((int64_t(group) * ranks + groups - 1) / groups);
}

int summary_group_size(int group, int ranks, int groups) {
  return summary_group_first(group + 1, ranks, groups) - summary_group_first(group, ranks, groups);
}

namespace {

bool is_message(EventKind k) {
  return k == EventKind::send_begin || k == EventKind::send_end || k == EventKind::recv_begin ||
         k == EventKind::recv_end;
}

bool is_begin(EventKind k) {
  return k == EventKind::step_begin || k == EventKind::compute_begin ||
         k == EventKind::collective_begin;
}

// Earlier of two times on one clock, where a model time below 0 means "unknown".
double earlier(double a, double b) {
  return a < 0 ? b : b < 0 ? a : std::min(a, b);
}
double later(double a, double b) {
  return std::max(a, b);
}

// The events to summarise: each rank's in the order they happened (by wall_s, stable, as
// trace_json orders them), ranks outside [0, world) left out.
struct Input {
  std::vector<const Event*> events;
  int world = 0;
};

Input input_of(const std::vector<Event>& events, int world) {
  Input in{.world = world};
  for (const Event& e : events)
    if (e.rank >= 0 && e.rank < world) in.events.push_back(&e);
  std::stable_sort(in.events.begin(), in.events.end(), [](const Event* a, const Event* b) {
    return std::tie(a->rank, a->wall_s) < std::tie(b->rank, b->wall_s);
  });
  return in;
}

// A rank's events that are not about a message, in order: its steps, compute, collectives
// and notes.
using Spans = std::vector<std::vector<const Event*>>;

Spans spans_by_rank(const Input& in) {
  Spans spans(in.world);
  for (const Event* e : in.events)
    if (!is_message(e->kind) &&
        !(e->kind == EventKind::note && e->peer >= 0))  // a note about one message
      spans[e->rank].push_back(e);
  return spans;
}

// A group's lane: its first rank's steps, compute and collectives, each begin the earliest
// and each end the latest of the ranks whose event at that place is the same, and none
// before the one before it (a group is in its next collective once all left the last).
void group_spans(const Spans& spans, int group, int ranks, int groups, std::vector<Event>& out) {
  const int first = summary_group_first(group, ranks, groups);
  const int last = first + summary_group_size(group, ranks, groups);
  const std::vector<const Event*>& lead = spans[first];
  double wall = -1e300, model = -1;
  for (size_t i = 0; i < lead.size(); ++i) {
    Event e = *lead[i];
    for (int r = first + 1; r < last; ++r) {
      if (i >= spans[r].size()) continue;
      const Event& m = *spans[r][i];
      if (m.kind != e.kind || std::strcmp(m.op, e.op) != 0) continue;
      const bool begin = is_begin(e.kind);
      e.wall_s = begin ? std::min(e.wall_s, m.wall_s) : std::max(e.wall_s, m.wall_s);
      e.model_s = begin ? earlier(e.model_s, m.model_s) : later(e.model_s, m.model_s);
    }
    wall = e.wall_s = std::max(e.wall_s, wall);
    if (e.model_s >= 0) model = e.model_s = std::max(e.model_s, model);
    e.rank = group;
    out.push_back(e);
  }
}

// Where an event goes among those of its lane at the same time: what ends before what
// begins, inner before outer for ends and outer before inner for begins, a message's note
// after its send. A span of no duration keeps its begin first (stable order, spans first).
int tie_rank(EventKind k) {
  switch (k) {
    case EventKind::send_end:
    case EventKind::recv_end:
      return 0;
    case EventKind::step_begin:
      return 3;
    case EventKind::compute_begin:
    case EventKind::collective_begin:
      return 4;
    case EventKind::send_begin:
    case EventKind::recv_begin:
      return 5;
    case EventKind::note:
      return 6;
    default:
      return 1;  // a step, compute or collective ends
  }
}

// The lanes' events in the order of their wall_s, which the trace writer keeps: a run's
// steady clock, or a trace's own times as read back, which are causal on either time base
// (a model-time trace's ties were broken so that each receive comes after its send).
void order_lanes(std::vector<Event>& out) {
  std::stable_sort(out.begin(), out.end(), [](const Event& a, const Event& b) {
    if (a.rank != b.rank) return a.rank < b.rank;
    if (a.wall_s != b.wall_s) return a.wall_s < b.wall_s;
    const bool span_a = !is_message(a.kind) && a.kind != EventKind::note;
    const bool span_b = !is_message(b.kind) && b.kind != EventKind::note;
    if (span_a && span_b) return false;  // their own order
    return tie_rank(a.kind) < tie_rank(b.kind);
  });
}

// One message between two groups in one collective, and what it stands for.
struct Bundle {
  int tag = 0;
  uint64_t count = 0, bytes = 0;
  Event send_begin, send_end, recv_begin, recv_end;
  bool has_send_end = false;
};

// (from group, to group, tag, the sender's count of collectives begun before it)
using BundleKey = std::tuple<int, int, int, int>;

// A message between ranks of two groups: the fold's message and its two slices, and the
// sender's count of collectives begun before it.
struct Crossing {
  const FoldMessage* message;
  const FoldSlice *send, *recv;
  int collective;
};

// An end of a message as an event of the sender's or receiver's lane.
Event end_event(EventKind kind, const FoldSlice& s, const Stamp& t) {
  return {.kind = kind,
          .rank = s.rank,
          .peer = s.peer,
          .tag = s.tag,
          .bytes = s.bytes,
          .wall_s = t.wall_s,
          .model_s = t.model_s};
}

// Every message received whose two ranks are in different groups, paired by the event fold
// as the trace writer pairs them (a receive's begin is where it was posted).
std::vector<Crossing> crossing_messages(const Input& in, int groups, const EventFold& fold,
                                        const std::vector<int>& collective_of,
                                        SummaryCounts& counts) {
  std::vector<Crossing> out;
  for (size_t i = 0; i < fold.messages().size(); ++i) {
    const FoldMessage& m = fold.messages()[i];
    if (summary_group(m.src, in.world, groups) == summary_group(m.dst, in.world, groups)) {
      ++counts.inside;
      continue;
    }
    if (!m.has_arrived || m.send_slice < 0 || m.recv_slice < 0) continue;  // not received here
    out.push_back(
        {&m, &fold.slices()[m.send_slice], &fold.slices()[m.recv_slice], collective_of[i]});
  }
  return out;
}

// Feeds every event to the fold, noting for each message (the fold adds one at each send)
// the count of collectives its sender had begun.
void fold_messages(const Input& in, EventFold& fold, std::vector<int>& collective_of) {
  std::vector<int> collectives(in.world, 0);
  for (const Event* e : in.events) {
    if (e->kind == EventKind::collective_begin) ++collectives[e->rank];
    fold.add(*e);
    collective_of.resize(fold.messages().size(), collectives[e->rank]);
  }
}

// A bundle is drawn as its first message's send and its last message's receive: real slices
// of ranks of the two groups, so they nest in the groups' collectives as those did.
void add_to(Bundle& b, const Crossing& c) {
  if (b.count == 0 || c.send->begin.wall_s < b.send_begin.wall_s) {
    b.send_begin = end_event(EventKind::send_begin, *c.send, c.send->begin);
    b.has_send_end = c.send->ended;
    if (c.send->ended) b.send_end = end_event(EventKind::send_end, *c.send, c.send->end);
  }
  if (b.count == 0 || c.recv->end.wall_s > b.recv_end.wall_s) {
    b.recv_begin = end_event(EventKind::recv_begin, *c.recv, c.recv->begin);
    b.recv_end = end_event(EventKind::recv_end, *c.recv, c.recv->end);
  }
  b.tag = c.message->tag;
  b.bytes += c.message->bytes;
  ++b.count;
}

// Event `e` no earlier than `floor`, on the file's clock and in model time.
void not_before(Event& e, const Event& floor) {
  e.wall_s = std::max(e.wall_s, floor.wall_s);
  e.model_s = later(e.model_s, floor.model_s);
}

// The events of the bundles from one group to another with one tag, in the order they were
// sent, each the k-th: their receives are kept in that order too (a pair's messages arrive
// in the order they were sent, which the trace's pairing relies on).
void pair_events(std::vector<Bundle*>& list, int from, int to, std::vector<Event>& out) {
  std::stable_sort(list.begin(), list.end(), [](const Bundle* a, const Bundle* b) {
    return a->send_begin.wall_s < b->send_begin.wall_s;
  });
  const Bundle* before = nullptr;
  for (uint64_t k = 0; k < list.size(); ++k) {
    Bundle& b = *list[k];
    if (before) {
      not_before(b.recv_begin, before->recv_begin);
      not_before(b.recv_end, before->recv_end);
    }
    not_before(b.recv_end, b.recv_begin);
    auto end = [&](Event e, int rank, int peer) {
      e.rank = rank;
      e.peer = peer;
      e.seq = k;
      e.bytes = b.bytes;
      e.preview_count = 0;
      out.push_back(e);
    };
    end(b.send_begin, from, to);
    out.push_back({.kind = EventKind::note,
                   .rank = from,
                   .peer = to,
                   .tag = b.tag,
                   .seq = b.count,
                   .wall_s = b.send_begin.wall_s,
                   .model_s = b.send_begin.model_s,
                   .op = kBundleNote});
    if (b.has_send_end) {
      Event e = b.send_end;
      if (e.model_s < 0) e.model_s = b.send_begin.model_s;  // its buffer's release: no model time
      end(e, from, to);
    }
    end(b.recv_begin, to, from);
    end(b.recv_end, to, from);
    before = &b;
  }
}

void bundle_events(std::map<BundleKey, Bundle>& bundles, std::vector<Event>& out) {
  std::map<std::tuple<int, int, int>, std::vector<Bundle*>> by_pair;  // (from, to, tag)
  for (auto& [key, b] : bundles)
    by_pair[{std::get<0>(key), std::get<1>(key), std::get<2>(key)}].push_back(&b);
  for (auto& [pair, list] : by_pair)
    pair_events(list, std::get<0>(pair), std::get<1>(pair), out);
}

}  // namespace

std::vector<Event> summarize_events(const std::vector<Event>& events, int world, int groups,
                                    SummaryCounts* counts) {
  if (groups < 1 || groups >= world)
    throw UsageError(fmt::format("--groups {}: give 1 to {} groups for a trace of {} ranks", groups,
                                 world - 1, world));
  const Input in = input_of(events, world);
  std::vector<Event> out;
  const Spans spans = spans_by_rank(in);
  for (int g = 0; g < groups; ++g)
    group_spans(spans, g, in.world, groups, out);
  EventFold fold(world);
  std::vector<int> collective_of;  // per message of the fold, in send order
  fold_messages(in, fold, collective_of);
  SummaryCounts n;
  std::map<BundleKey, Bundle> bundles;
  for (const Crossing& c : crossing_messages(in, groups, fold, collective_of, n)) {
    const int from = summary_group(c.message->src, in.world, groups);
    const int to = summary_group(c.message->dst, in.world, groups);
    add_to(bundles[{from, to, c.message->tag, c.collective}], c);
    ++n.between;
  }
  n.joined = bundles.size();
  bundle_events(bundles, out);
  order_lanes(out);
  if (counts) *counts = n;
  return out;
}

std::string summarized_trace_json(const TraceEvents& in, int groups, SummaryCounts* counts) {
  return trace_json(summarize_events(in.events, in.world, groups, counts),
                    {.time_base = in.time_base,
                     .run_json = in.run_json,
                     .world = groups,
                     .summary = {.ranks = in.world, .groups = groups}});
}

}  // namespace dsgd
