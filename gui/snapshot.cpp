// Sections: [time and links] [build: messages, slices and ranks, gradients].
#include "gui/snapshot.h"

#include "core/comm/chunks.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <tuple>

namespace dsgd::gui {
namespace {

// ---------------------------------------------------------------------------------------
// [time and links]
// ---------------------------------------------------------------------------------------

double time_of(const Event& e, TimeBase base) {
  return base == TimeBase::model ? e.model_s : e.wall_s;
}

double transfer_estimate_s(const Snapshot& s, int src, int dst, uint64_t bytes) {
  if (src < 0 || dst < 0 || src >= s.world || dst >= s.world || s.links.empty()) return 0;
  const LinkView& l = s.link(src, dst);
  return l.latency_s + (l.bandwidth_Bps > 0 ? static_cast<double>(bytes) / l.bandwidth_Bps : 0);
}

using MessageKey = std::tuple<int, int, int>;  // src, dst, tag

// Per-rank bookkeeping while walking the events.
struct RankWalk {
  std::vector<std::pair<const char*, double>> computes, collectives;  // open: name, begin
  int ring_sent = 0, ring_received = 0;
  bool ring_active = false;  // an all_reduce with ring messages is open
  bool all_reduce_done = false;
  bool saw_all_reduce = false;
};

bool is_ring_tag(int tag) {
  return tag == collective_tag::kAllReduceRing;
}

}  // namespace

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

// ---------------------------------------------------------------------------------------
// [build]
// ---------------------------------------------------------------------------------------

Snapshot build_snapshot(const std::vector<Event>& events, const SnapshotInputs& in) {
  Snapshot s;
  s.time_base = in.time_base;
  s.algorithm = in.algorithm;
  int world = in.world;
  double first = 0, last = 0;
  bool any = false;
  for (const Event& e : events) {
    world = std::max({world, e.rank + 1, e.peer + 1});
    const double t = time_of(e, in.time_base);
    if (!any || t < first) first = t;
    if (!any || t > last) last = t;
    any = true;
  }
  s.world = world;
  s.begin_s = first;
  s.end_s = last;
  s.now_s = in.now_s >= 0 ? in.now_s : last;
  const double now = s.now_s;

  s.links = in.links;
  if (s.links.size() != static_cast<size_t>(world) * world)
    s.links.assign(static_cast<size_t>(world) * world, LinkView{});
  s.ranks.assign(world, RankView{});
  for (int r = 0; r < world; ++r) {
    if (r < static_cast<int>(in.stragglers.size())) s.ranks[r].straggler = in.stragglers[r];
  }

  // [messages] sends by now, paired with receives (whenever they complete).
  std::map<MessageKey, std::vector<int>> sent;      // key -> message index by k
  std::map<MessageKey, std::vector<double>> recvd;  // key -> completion time by k
  std::vector<RankWalk> walk(world);
  const auto complete = [&](MessageView& m, double t) {
    m.arrive_s = t;
    m.estimated = false;
    m.arrived = t <= now;
  };

  for (const Event& e : events) {
    if (e.rank < 0 || e.rank >= world) continue;
    const double t = time_of(e, in.time_base);
    RankWalk& w = walk[e.rank];
    RankView& rv = s.ranks[e.rank];
    if (e.kind == EventKind::recv_end && e.peer >= 0) {
      // A receive counts for pairing whenever it happened: a replay knows arrivals ahead.
      const MessageKey key{e.peer, e.rank, e.tag};
      std::vector<double>& times = recvd[key];
      const size_t k = times.size();
      times.push_back(t);
      auto it = sent.find(key);
      if (it != sent.end() && k < it->second.size()) complete(s.messages[it->second[k]], t);
    }
    if (t > now) continue;
    rv.last_event_s = std::max(rv.last_event_s, t);
    switch (e.kind) {
      case EventKind::send_begin: {
        const MessageKey key{e.rank, e.peer, e.tag};
        std::vector<int>& ks = sent[key];
        MessageView m{.src = e.rank,
                      .dst = e.peer,
                      .tag = e.tag,
                      .k = ks.size(),
                      .bytes = e.bytes,
                      .op = op_for_tag(e.tag),
                      .send_s = t};
        m.arrive_s = t + transfer_estimate_s(s, e.rank, e.peer, e.bytes);
        m.preview_count = std::min<uint8_t>(e.preview_count, 4);
        std::copy_n(e.preview.begin(), 4, m.preview);
        if (is_ring_tag(e.tag) && w.ring_active) {
          m.chunk = ring_send_chunk(world, e.rank, w.ring_sent);
          m.contributions = ring_send_contributions(world, e.rank, w.ring_sent);
          ++w.ring_sent;
        }
        auto r = recvd.find(key);
        if (r != recvd.end() && m.k < r->second.size()) complete(m, r->second[m.k]);
        ks.push_back(static_cast<int>(s.messages.size()));
        s.messages.push_back(m);
        break;
      }
      case EventKind::recv_end:
        if (is_ring_tag(e.tag) && w.ring_active) ++w.ring_received;
        break;
      case EventKind::compute_begin:
        w.computes.push_back({e.op, t});
        break;
      case EventKind::compute_end:
        for (size_t i = w.computes.size(); i-- > 0;)
          if (std::strcmp(w.computes[i].first, e.op) == 0) {
            s.slices.push_back(
                {e.rank, Lane::compute, w.computes[i].first, w.computes[i].second, t, false});
            w.computes.erase(w.computes.begin() + static_cast<std::ptrdiff_t>(i));
            break;
          }
        break;
      case EventKind::collective_begin:
        w.collectives.push_back({e.op, t});
        if (std::strcmp(e.op, "all_reduce") == 0) {
          w.ring_active = true;  // until proven otherwise: counts only ring-tagged messages
          w.ring_sent = w.ring_received = 0;
          w.all_reduce_done = false;
          w.saw_all_reduce = true;
        }
        break;
      case EventKind::collective_end:
        for (size_t i = w.collectives.size(); i-- > 0;)
          if (std::strcmp(w.collectives[i].first, e.op) == 0) {
            s.slices.push_back(
                {e.rank, Lane::comm, w.collectives[i].first, w.collectives[i].second, t, false});
            w.collectives.erase(w.collectives.begin() + static_cast<std::ptrdiff_t>(i));
            break;
          }
        if (std::strcmp(e.op, "all_reduce") == 0) {
          w.ring_active = false;
          w.all_reduce_done = true;
        }
        break;
      case EventKind::step_begin:
        rv.step = std::max<int64_t>(rv.step, static_cast<int64_t>(e.seq));
        break;
      default:
        break;
    }
  }

  // [slices and ranks] phases still open at now_s end there.
  for (int r = 0; r < world; ++r) {
    for (const auto& [name, begin] : walk[r].computes)
      s.slices.push_back({r, Lane::compute, name, begin, now, true});
    for (const auto& [name, begin] : walk[r].collectives)
      s.slices.push_back({r, Lane::comm, name, begin, now, true});
    s.ranks[r].computing = !walk[r].computes.empty();
    s.ranks[r].in_collective = !walk[r].collectives.empty();
  }
  int64_t max_step = 0;
  for (const RankView& rv : s.ranks)
    max_step = std::max(max_step, rv.step);
  for (int r = 0; r < world && r < static_cast<int>(in.crash_steps.size()); ++r)
    s.ranks[r].crashed = in.crash_steps[r] > 0 && max_step >= in.crash_steps[r];

  for (int i = 0; i < static_cast<int>(s.messages.size()); ++i)
    if (!s.messages[i].arrived) s.in_flight.push_back(i);

  // [gradients] ring chunk bookkeeping of each rank's latest all_reduce.
  GradientView& g = s.gradients;
  bool ring_seen = false;
  for (const MessageView& m : s.messages)
    ring_seen |= is_ring_tag(m.tag);
  g.ring = ring_seen || in.algorithm == Algorithm::ring;
  g.chunks = world;
  g.contributions.assign(world, std::vector<int>(world, 1));
  for (int r = 0; r < world; ++r) {
    const RankWalk& w = walk[r];
    for (int c = 0; c < world; ++c) {
      int n = 1;
      if (w.saw_all_reduce && w.all_reduce_done)
        n = world;
      else if (w.saw_all_reduce && g.ring)
        n = ring_contributions(world, r, c, w.ring_received);
      g.contributions[r][c] = n;
    }
  }
  if (in.demo_elements > 0 && world > 0) {
    g.elements = in.demo_elements;
    const Chunks chunks{static_cast<size_t>(in.demo_elements), world};
    g.element_chunk.resize(in.demo_elements);
    for (int c = 0; c < world; ++c)
      for (size_t i = chunks.offset(c); i < chunks.offset(c + 1); ++i)
        g.element_chunk[i] = c;
    g.values.assign(world, std::vector<float>(in.demo_elements));
    for (int r = 0; r < world; ++r)
      for (int i = 0; i < in.demo_elements; ++i)
        g.values[r][i] = demo_partial_sum(world, r, i, g.contributions[r][g.element_chunk[i]]);
  }
  return s;
}

}  // namespace dsgd::gui
