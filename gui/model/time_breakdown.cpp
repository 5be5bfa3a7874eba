// Sections: [spans] [per rank] [prediction] [step].
// A span is [a, b] in the snapshot's time base; a rank's spans of one kind are merged before
// they are measured, so overlapping messages or nested collectives count once.
#include "gui/model/time_breakdown.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>

#include "core/comm/collective_tags.h"
#include "core/comm/cost_model.h"
#include "core/errors.h"

namespace dsgd::gui {
namespace {

// ---------------------------------------------------------------------------------------
// [spans]
// ---------------------------------------------------------------------------------------

struct Span {
  double a = 0, b = 0;
};
using Spans = std::vector<Span>;

Spans merged(Spans v) {
  std::sort(v.begin(), v.end(), [](const Span& x, const Span& y) { return x.a < y.a; });
  Spans out;
  for (const Span& s : v) {
    if (s.b <= s.a) continue;
    if (!out.empty() && s.a <= out.back().b)
      out.back().b = std::max(out.back().b, s.b);
    else
      out.push_back(s);
  }
  return out;
}

double length(const Spans& v) {
  double sum = 0;
  for (const Span& s : v)
    sum += s.b - s.a;
  return sum;
}

// Both merged.
double overlap(const Spans& x, const Spans& y) {
  double sum = 0;
  for (size_t i = 0, j = 0; i < x.size() && j < y.size();) {
    sum += std::max(0.0, std::min(x[i].b, y[j].b) - std::max(x[i].a, y[j].a));
    if (x[i].b < y[j].b)
      ++i;
    else
      ++j;
  }
  return sum;
}

// ---------------------------------------------------------------------------------------
// [per rank]
// ---------------------------------------------------------------------------------------

// What one rank did in the step: its window, its slices and its messages, clipped to it.
struct RankSpans {
  bool seen = false;
  Span window;
  Spans compute, collectives, messages;
  std::vector<const SliceView*> collective_slices;
  std::vector<const MessageView*> sent;
};

void clip_into(Spans& spans, const Span& window, double a, double b) {
  a = std::max(a, window.a);
  b = std::min(b, window.b);
  if (b > a) spans.push_back({a, b});
}

// When a message is off the wire: its send plus the link's latency and bytes / bandwidth
// (after that it waits for its receiver, which is not the network's time), at the latest
// when it was received; with ideal links (a replay without its run), when it was received.
double wire_end_s(const Snapshot& s, const MessageView& m) {
  const double received = m.arrived ? m.arrive_s : std::min(m.arrive_s, s.now_s);
  const double wire_s = transfer_estimate_s(s, m.src, m.dst, m.bytes);
  return wire_s > 0 ? std::min(received, m.send_s + wire_s) : received;
}

std::vector<RankSpans> rank_spans(const Snapshot& s, int64_t step) {
  std::vector<RankSpans> ranks(s.world);
  for (const StepView& v : s.steps)
    if (v.step == step && v.rank >= 0 && v.rank < s.world)
      ranks[v.rank] = {.seen = true, .window = {v.begin_s, v.end_s}};
  for (const SliceView& sl : s.slices) {
    if (sl.rank < 0 || sl.rank >= s.world) continue;
    RankSpans& r = ranks[sl.rank];
    if (!r.seen || sl.begin_s < r.window.a || sl.begin_s > r.window.b) continue;
    clip_into(sl.lane == Lane::compute ? r.compute : r.collectives, r.window, sl.begin_s, sl.end_s);
    if (sl.lane == Lane::comm) r.collective_slices.push_back(&sl);
  }
  for (const MessageView& m : s.messages) {
    const double wire_end = wire_end_s(s, m);
    for (const int rank : {m.src, m.dst}) {
      if (rank < 0 || rank >= s.world || !ranks[rank].seen) continue;
      clip_into(ranks[rank].messages, ranks[rank].window, m.send_s, wire_end);
    }
    if (m.src >= 0 && m.src < s.world && ranks[m.src].seen) ranks[m.src].sent.push_back(&m);
  }
  return ranks;
}

RankTime rank_time(const RankSpans& r) {
  if (!r.seen) return {};
  const Spans collectives = merged(r.collectives);
  const double in_collectives = length(collectives);
  RankTime t{.compute_s = length(merged(r.compute)), .seen = true};
  t.transfer_s = overlap(merged(r.messages), collectives);
  t.waiting_s = std::max(0.0, in_collectives - t.transfer_s);
  t.other_s = std::max(0.0, (r.window.b - r.window.a) - t.compute_s - in_collectives);
  return t;
}

// ---------------------------------------------------------------------------------------
// [prediction]
// ---------------------------------------------------------------------------------------

// The slowest link between two ranks: the highest latency, the lowest bandwidth.
LinkView slowest_link(const Snapshot& s) {
  LinkView slowest;
  for (int a = 0; a < s.world; ++a)
    for (int b = 0; b < s.world; ++b) {
      if (a == b || s.links.empty()) continue;
      const LinkView& l = s.link(a, b);
      slowest.latency_s = std::max(slowest.latency_s, l.latency_s);
      if (l.bandwidth_Bps > 0 &&
          (slowest.bandwidth_Bps == 0 || l.bandwidth_Bps < slowest.bandwidth_Bps))
        slowest.bandwidth_Bps = l.bandwidth_Bps;
    }
  return slowest;
}

std::optional<CollectiveOp> op_named(const char* name) {
  for (CollectiveOp op : {CollectiveOp::broadcast, CollectiveOp::reduce, CollectiveOp::all_reduce,
                          CollectiveOp::gather, CollectiveOp::scatter, CollectiveOp::all_gather,
                          CollectiveOp::reduce_scatter, CollectiveOp::barrier})
    if (std::strcmp(name, to_string(op)) == 0) return op;
  return std::nullopt;
}

// The collective a slice is, as the tag of the first message its rank sent in it names it
// (the algorithm the snapshot expects when it sent none).
const CollectiveTag* collective_of(const Snapshot& s, const RankSpans& r, const SliceView& sl) {
  const std::optional<CollectiveOp> op = op_named(sl.name);
  if (!op) return nullptr;
  for (const MessageView* m : r.sent) {
    if (m->send_s < sl.begin_s || m->send_s > sl.end_s) continue;
    const CollectiveTag* tag = find_collective_tag(m->tag);
    if (tag && tag->op == *op) return tag;
  }
  return find_collective_tag(*op,
                             *op == CollectiveOp::all_reduce ? s.algorithm : Algorithm::automatic);
}

// Adds rank r's collectives' alpha-beta time to `step` when it is the largest so far.
void predict(const Snapshot& s, const RankSpans& r, const LinkView& link, StepTime& step) {
  double predicted = 0, largest_s = 0;
  int count = 0;
  const SliceView* largest = nullptr;
  const CollectiveTag* largest_tag = nullptr;
  for (const SliceView* sl : r.collective_slices) {
    const CollectiveTag* tag = collective_of(s, r, *sl);
    if (!tag) continue;
    double t_s = 0;
    try {
      t_s = collective_cost(tag->op, tag->algorithm, s.world, sl->bytes)
                .predict_s(link.latency_s, link.bandwidth_Bps);
    } catch (const UsageError&) {
      continue;  // an algorithm the op lacks: no prediction
    }
    predicted += t_s;
    ++count;
    if (!largest || sl->bytes > largest->bytes) largest = sl, largest_tag = tag, largest_s = t_s;
  }
  if (predicted <= step.predicted_s || !largest) return;
  step.predicted_s = predicted;
  step.collectives = count;
  step.collective = largest_tag->label;
  step.collective_predicted_s = largest_s;
  step.bytes = largest->bytes;
  const std::string formula = cost_formula(largest_tag->op, largest_tag->algorithm);
  step.formula = formula.substr(0, formula.find(';'));
}

}  // namespace

// ---------------------------------------------------------------------------------------
// [step]
// ---------------------------------------------------------------------------------------

std::vector<int64_t> breakdown_steps(const Snapshot& s) {
  std::vector<int64_t> out;
  for (const StepView& v : s.steps)
    out.push_back(v.step);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

int64_t latest_complete_step(const Snapshot& s) {
  std::map<int64_t, int> ended;  // step -> ranks that ended it
  for (const StepView& v : s.steps)
    if (!v.open) ++ended[v.step];
  for (auto it = ended.rbegin(); it != ended.rend(); ++it)
    if (it->second >= s.world) return it->first;
  return 0;
}

StepTime step_time(const Snapshot& s, int64_t step) {
  StepTime out{.step = step};
  const std::vector<RankSpans> ranks = rank_spans(s, step);
  const LinkView link = slowest_link(s);
  out.alpha_s = link.latency_s;
  out.bandwidth_Bps = link.bandwidth_Bps;
  int ended = 0;
  for (const StepView& v : s.steps)
    ended += v.step == step && !v.open;
  out.complete = s.world > 0 && ended >= s.world;
  for (const RankSpans& r : ranks) {
    out.ranks.push_back(rank_time(r));
    if (r.seen) predict(s, r, link, out);
  }
  return out;
}

StepSummary summarize(const StepTime& t) {
  StepSummary out;
  std::vector<double> computes;
  int most_compute = -1;
  for (int r = 0; r < static_cast<int>(t.ranks.size()); ++r) {
    const RankTime& rt = t.ranks[r];
    if (!rt.seen) continue;
    if (out.slowest < 0 || rt.total_s() > t.ranks[out.slowest].total_s()) out.slowest = r;
    if (most_compute < 0 || rt.compute_s > t.ranks[most_compute].compute_s) most_compute = r;
    computes.push_back(rt.compute_s);
  }
  if (computes.size() < 2) return out;
  std::nth_element(computes.begin(), computes.begin() + computes.size() / 2, computes.end());
  const double median = computes[computes.size() / 2];
  if (median <= 0) return out;
  const double ratio = t.ranks[most_compute].compute_s / median;
  // Slower, and by enough to matter: a tenth of the step or more.
  const double extra_s = t.ranks[most_compute].compute_s - median;
  if (ratio >= 1.5 && extra_s >= 0.1 * t.ranks[out.slowest].total_s())
    out.straggler = most_compute, out.compute_ratio = ratio;
  return out;
}

}  // namespace dsgd::gui
