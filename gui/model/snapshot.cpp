// Sections: [time and links] [build: frame, messages, slices and ranks, messages in flight
// and lost, gradients] [outages].
// Everything event-derived comes from the event fold (core/event_fold.h), as the trace's does.
#include "gui/model/snapshot.h"

#include <algorithm>
#include <numeric>

#include "core/comm/chunks.h"
#include "core/comm/collective_tags.h"
#include "core/event_fold.h"

namespace dsgd::gui {
namespace {

// ---------------------------------------------------------------------------------------
// [time and links]
// ---------------------------------------------------------------------------------------

double time_of(const Event& e, TimeBase base) {
  return base == TimeBase::model ? e.model_s : e.wall_s;
}

double time_of(const Stamp& s, TimeBase base) {
  return base == TimeBase::model ? s.model_s : s.wall_s;
}

// When a message sent at `t` leaves: after the outages holding its link (or never).
double departure_s(const SnapshotInputs& in, int src, int dst, double t) {
  return in.outages.empty() ? t : sim::outage_end(in.outages, src, dst, t);
}

// ---------------------------------------------------------------------------------------
// [build]
// ---------------------------------------------------------------------------------------

// What does not need the fold: world, the span of the events, the time cursor, links, ranks.
Snapshot frame(const std::vector<Event>& events, const SnapshotInputs& in) {
  Snapshot s;
  s.time_base = in.time_base;
  s.algorithm = in.algorithm;
  int world = in.world;
  bool any = false;
  for (const Event& e : events) {
    world = std::max({world, e.rank + 1, e.peer + 1});
    const double t = time_of(e, in.time_base);
    if (!any || t < s.begin_s) s.begin_s = t;
    if (!any || t > s.end_s) s.end_s = t;
    any = true;
  }
  s.world = world;
  s.now_s = in.now_s >= 0 ? in.now_s : s.end_s;
  s.links = in.links;
  if (s.links.size() != static_cast<size_t>(world) * world)
    s.links.assign(static_cast<size_t>(world) * world, LinkView{});
  s.ranks.assign(world, RankView{});
  for (int r = 0; r < world && r < static_cast<int>(in.stragglers.size()); ++r)
    s.ranks[r].straggler = in.stragglers[r];
  return s;
}

// The events up to the time cursor; later receives only tell when messages land.
EventFold fold_until(const std::vector<Event>& events, const Snapshot& s) {
  EventFold fold(s.world);
  fold.reserve(events.size());
  for (const Event& e : events) {
    if (e.rank < 0 || e.rank >= s.world) continue;
    if (time_of(e, s.time_base) <= s.now_s)
      fold.add(e);
    else if (e.kind == EventKind::recv_end)
      fold.add_arrival(e);
  }
  return fold;
}

MessageView message_view(const Snapshot& s, const EventFold& fold, const FoldMessage& f,
                         const SnapshotInputs& in) {
  const MessagePhase p = fold.phase(f);
  MessageView m{.src = f.src,
                .dst = f.dst,
                .tag = f.tag,
                .k = f.k,
                .bytes = f.bytes,
                .op = p.label(f.tag),
                .phase = p.phase,
                .step = p.step,
                .steps = p.steps,
                .phase_step = p.phase_step,
                .phase_steps = p.phase_steps,
                .send_s = time_of(f.sent, s.time_base),
                .chunk = p.chunk,
                .segment = p.segment,
                .segments = p.segments,
                .contributions = p.contributions,
                .preview_count = f.preview_count};
  m.retransmits = f.retransmits;
  std::copy_n(f.preview.begin(), 4, m.preview);
  m.depart_s = departure_s(in, f.src, f.dst, m.send_s);
  if (f.has_arrived) {
    m.arrive_s = time_of(f.arrived, s.time_base);
    m.depart_s = std::min(m.depart_s, m.arrive_s);
    m.estimated = false;
    m.arrived = m.arrive_s <= s.now_s;
  } else {
    m.arrive_s =
        m.depart_s + transfer_estimate_s(s, f.src, f.dst, f.bytes) + f.retransmits * in.rto_s;
  }
  return m;
}

// Compute phases, collectives and training steps begun by now; those still open end at now.
void add_slices(Snapshot& s, const EventFold& fold) {
  const auto add = [&](const FoldSlice& f) {
    const double begin_s = time_of(f.begin, s.time_base);
    const double end_s = f.ended ? time_of(f.end, s.time_base) : s.now_s;
    if (f.kind == SliceKind::step)
      s.steps.push_back({.rank = f.rank,
                         .step = static_cast<int64_t>(f.seq),
                         .begin_s = begin_s,
                         .end_s = end_s,
                         .open = !f.ended});
    if (f.kind != SliceKind::compute && f.kind != SliceKind::collective) return;
    s.slices.push_back({.rank = f.rank,
                        .lane = f.kind == SliceKind::compute ? Lane::compute : Lane::comm,
                        .name = f.name,
                        .label = *f.label ? f.label : f.name,
                        .begin_s = begin_s,
                        .end_s = end_s,
                        .open = !f.ended,
                        .bytes = f.bytes});
  };
  for (const FoldSlice& f : fold.slices())
    add(f);
  for (int r = 0; r < s.world; ++r)
    for (const FoldSlice& f : fold.open_slices(r))
      add(f);
}

void add_ranks(Snapshot& s, const EventFold& fold, const SnapshotInputs& in) {
  int64_t max_step = 0;
  for (int r = 0; r < s.world; ++r) {
    const RankFold f = fold.rank(r);
    RankView& rv = s.ranks[r];
    rv.step = f.step;
    rv.computing = f.computing;
    rv.in_collective = f.in_collective;
    rv.last_event_s = std::max(0.0, time_of(f.last, s.time_base));
    max_step = std::max(max_step, rv.step);
  }
  for (int r = 0; r < s.world && r < static_cast<int>(in.crash_steps.size()); ++r)
    s.ranks[r].crashed = in.crash_steps[r] > 0 && max_step >= in.crash_steps[r];
  for (int r = 0; r < s.world && r < static_cast<int>(in.crash_s.size()); ++r)
    s.ranks[r].crashed |= in.crash_s[r] > 0 && s.now_s >= in.crash_s[r];
}

// Messages in flight, and those that never arrive: past their estimated arrival with no
// receive, when a rank at either end crashed or no receive is still to come; and, at the
// end of a run that is over, every one with no receive (nothing moves any more).
void add_in_flight(Snapshot& s, const SnapshotInputs& in) {
  const bool over = in.complete && s.now_s >= s.end_s;
  for (int i = 0; i < static_cast<int>(s.messages.size()); ++i) {
    MessageView& m = s.messages[i];
    if (m.arrived) continue;
    const bool crashed_end = s.ranks[m.src].crashed || s.ranks[m.dst].crashed;
    m.lost = m.estimated && (over || ((crashed_end || in.complete) && s.now_s >= m.arrive_s));
    (m.lost ? s.lost : s.in_flight).push_back(i);
  }
}

void add_outages(Snapshot& s, const SnapshotInputs& in) {
  s.links_down = links_down_at(in.outages, s.now_s);
  if (s.links_down.empty()) return;
  s.links_down_until_s = 0;
  for (const auto& [src, dst] : s.links_down)
    s.links_down_until_s =
        std::max(s.links_down_until_s, sim::outage_end(in.outages, src, dst, s.now_s));
  s.partition = partition_groups(s.world, s.links_down);
}

// Each rank's latest all_reduce, as the algorithm its messages name runs it (the inputs'
// algorithm until messages show one): ring chunks, or the whole buffer.
void add_gradients(Snapshot& s, const EventFold& fold, const SnapshotInputs& in) {
  GradientView& g = s.gradients;
  Algorithm shown = in.algorithm;
  for (int r = 0; r < s.world; ++r)
    if (const Algorithm a = fold.all_reduce_algorithm(r); a != Algorithm::automatic) shown = a;
  const CollectiveTag* tag = find_collective_tag(CollectiveOp::all_reduce, shown);
  g.label = tag ? tag->label : "all_reduce";
  g.ring = shown == Algorithm::ring;
  g.chunks = g.ring ? s.world : 1;
  g.contributions.resize(s.world);
  for (int r = 0; r < s.world; ++r) {
    g.contributions[r] = fold.all_reduce_contributions(r, shown);
    if (s.ranks[r].crashed) continue;  // what it held when it died is no one's any more
    ++g.alive;
    g.holding_sum += std::all_of(g.contributions[r].begin(), g.contributions[r].end(),
                                 [&](int c) { return c == s.world; });
  }
  if (in.demo_elements <= 0 || s.world <= 0) return;
  g.elements = in.demo_elements;
  const Chunks chunks{static_cast<size_t>(in.demo_elements), g.chunks};
  g.element_chunk.resize(in.demo_elements);
  for (int c = 0; c < g.chunks; ++c)
    for (size_t i = chunks.offset(c); i < chunks.offset(c + 1); ++i)
      g.element_chunk[i] = c;
  g.values.assign(s.world, std::vector<float>(in.demo_elements));
  for (int r = 0; r < s.world; ++r)
    for (int i = 0; i < in.demo_elements; ++i)
      g.values[r][i] = demo_partial_sum(s.world, r, i, g.contributions[r][g.element_chunk[i]]);
}

}  // namespace

double transfer_estimate_s(const Snapshot& s, int src, int dst, uint64_t bytes) {
  if (src < 0 || dst < 0 || src >= s.world || dst >= s.world || s.links.empty()) return 0;
  const LinkView& l = s.link(src, dst);
  return l.latency_s + (l.bandwidth_Bps > 0 ? static_cast<double>(bytes) / l.bandwidth_Bps : 0);
}

// ---------------------------------------------------------------------------------------
// [outages]
// ---------------------------------------------------------------------------------------

std::vector<std::pair<int, int>> links_down_at(const std::vector<sim::Outage>& outages, double t) {
  std::vector<std::pair<int, int>> down;
  for (const sim::Outage& o : outages)
    if (t >= o.from_s && t < o.until_s) down.insert(down.end(), o.links.begin(), o.links.end());
  std::sort(down.begin(), down.end());
  down.erase(std::unique(down.begin(), down.end()), down.end());
  return down;
}

std::vector<std::vector<int>> partition_groups(int world,
                                               const std::vector<std::pair<int, int>>& down) {
  if (world < 2 || down.empty()) return {};
  const auto is_down = [&](int a, int b) {
    return std::binary_search(down.begin(), down.end(), std::pair{a, b});
  };
  std::vector<int> group(world);
  std::iota(group.begin(), group.end(), 0);
  const auto root = [&](int r) {
    while (group[r] != r)
      r = group[r] = group[group[r]];
    return r;
  };
  for (int a = 0; a < world; ++a)
    for (int b = a + 1; b < world; ++b)
      if (!is_down(a, b) || !is_down(b, a)) group[root(b)] = root(a);
  std::vector<std::vector<int>> out;
  std::vector<int> index(world, -1);
  for (int r = 0; r < world; ++r) {
    int& g = index[root(r)];
    if (g < 0) {
      g = static_cast<int>(out.size());
      out.emplace_back();
    }
    out[g].push_back(r);
  }
  if (out.size() < 2) out.clear();
  return out;
}

void mark_slow_links(std::vector<LinkView>& links) {
  if (links.empty()) return;
  std::vector<double> lat, bw;
  for (const LinkView& l : links) {
    lat.push_back(l.latency_s);
    if (l.bandwidth_Bps > 0) bw.push_back(l.bandwidth_Bps);
  }
  std::nth_element(lat.begin(), lat.begin() + lat.size() / 2, lat.end());
  const double median_lat = lat[lat.size() / 2];
  double median_bw = 0;
  if (!bw.empty()) {
    std::nth_element(bw.begin(), bw.begin() + bw.size() / 2, bw.end());
    median_bw = bw[bw.size() / 2];
  }
  for (LinkView& l : links)
    l.slow = (l.latency_s > 2 * median_lat && l.latency_s > 0) ||
             (median_bw > 0 && l.bandwidth_Bps > 0 && l.bandwidth_Bps * 2 < median_bw);
}

Snapshot build_snapshot(const std::vector<Event>& events, const SnapshotInputs& in) {
  Snapshot s = frame(events, in);
  const EventFold fold = fold_until(events, s);
  s.messages.reserve(fold.messages().size());
  for (const FoldMessage& f : fold.messages())
    s.messages.push_back(message_view(s, fold, f, in));
  add_slices(s, fold);
  add_ranks(s, fold, in);
  add_in_flight(s, in);
  add_outages(s, in);
  add_gradients(s, fold, in);
  return s;
}

}  // namespace dsgd::gui
