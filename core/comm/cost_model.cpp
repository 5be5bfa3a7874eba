// The alpha-beta cost of each algorithm, counted from what its file does (see the header
// for the link model). R = world size, S = bytes, C = S/4 floats, c = C/R floats per rank
// (gather, scatter, all_gather, reduce_scatter), D = max popcount(v) over v < R, the depth
// of a binomial tree, P = 2^floor(log2 R), E = R - P. Chunked algorithms are counted in
// whole floats with Chunks, so uneven pieces cost what the largest piece costs.
#include "core/comm/cost_model.h"

#include <algorithm>
#include <bit>
#include <vector>

#include <fmt/format.h>

#include "core/comm/chunks.h"
#include "core/comm/halving_doubling_schedule.h"
#include "core/comm/ring_schedule.h"
#include "core/errors.h"

namespace dsgd {
namespace {

constexpr double kFloat = sizeof(float);

int tree_depth(int world) {
  int depth = 0;
  for (int v = 1; v < world; ++v)
    depth = std::max(depth, std::popcount(static_cast<unsigned>(v)));
  return depth;
}

// Children of v in the binomial tree over `world` ranks: v + 2^k for 2^k below v's lowest
// set bit (every 2^k < world for the root).
int tree_children(int v, int world) {
  int children = 0;
  for (int mask = 1; mask < world; mask <<= 1) {
    if (v & mask) break;
    if (v + mask < world) ++children;
  }
  return children;
}

Cost tree_cost(int world, double bytes, bool reduce_phase, bool broadcast_phase) {
  const int depth = tree_depth(world);
  Cost cost;
  const int phases = int(reduce_phase) + int(broadcast_phase);
  cost.steps = phases * depth;
  cost.critical_path_bytes = phases * depth * bytes;
  for (int v = 0; v < world; ++v) {
    double sent = 0;
    if (reduce_phase && v != 0) sent += bytes;
    if (broadcast_phase) sent += tree_children(v, world) * bytes;
    cost.bytes_sent_per_rank = std::max(cost.bytes_sent_per_rank, sent);
  }
  return cost;
}

// Steps 1-5 of allreduce_halving_doubling.cpp, counted per rank.
Cost halving_doubling_cost(int world, size_t count) {
  const HalvingDoubling h = HalvingDoubling::of(world);
  const int p = h.pow2, extra = h.extra;
  const Chunks blocks{count, p};
  const double whole = count * kFloat;
  Cost cost;
  cost.steps = h.steps();
  cost.critical_path_bytes = extra > 0 ? 2 * whole : 0.0;
  std::vector<double> sent(p, 0.0);  // per core rank v
  for (int d = p / 2; d >= 1; d /= 2) {
    // Every group of 2d blocks splits at its middle; the step waits for its largest half.
    size_t step_max = 0;
    for (int v = 0; v < p; ++v) {
      const int lo = v / (2 * d) * (2 * d), mid = lo + d;
      const bool upper = (v & d) != 0;
      const size_t give = upper ? blocks.span_size(lo, mid) : blocks.span_size(mid, lo + 2 * d);
      const size_t keep = upper ? blocks.span_size(mid, lo + 2 * d) : blocks.span_size(lo, mid);
      step_max = std::max(step_max, give);
      // Reduce-scatter sends `give`; the mirrored all-gather step sends what is kept.
      sent[v] += (give + keep) * kFloat;
    }
    cost.critical_path_bytes += 2 * step_max * kFloat;  // once halving, once doubling
  }
  for (int v = 0; v < p; ++v) {
    const bool folded = v < extra;  // odd rank 2v+1, which also unfolds to rank 2v
    cost.bytes_sent_per_rank = std::max(cost.bytes_sent_per_rank, sent[v] + (folded ? whole : 0));
  }
  if (extra > 0) cost.bytes_sent_per_rank = std::max(cost.bytes_sent_per_rank, whole);
  return cost;
}

// Recursive doubling's longest chain of messages, in message times. Sends are eager, so a
// core rank's swap at distance d leaves as soon as it has the one before: rank v's values
// reach rank u after popcount(u ^ v) swaps, one more when v waits for a fold, one more
// when u unfolds. So the chain is L swaps, plus one with any fold (v = 0 folded, u = its
// complement), plus two when two folded core ranks are complements, v and P-1-v both below
// E, which needs 2E > P. (5 ranks: 3, not fold + 2 + unfold; 7 ranks: 4.)
int recursive_doubling_depth(const HalvingDoubling& h) {
  if (!h.folds()) return h.levels;
  return h.levels + (2 * h.extra > h.pow2 ? 2 : 1);
}

// allreduce_recursive_doubling.cpp: log2 P swaps of the whole buffer, after the fold and
// before the unfold when R is not a power of two (a folded core rank also unfolds).
Cost recursive_doubling_cost(int world, size_t count) {
  const HalvingDoubling h = HalvingDoubling::of(world);
  const double whole = count * kFloat;
  const int depth = recursive_doubling_depth(h);
  return {.steps = depth,
          .bytes_sent_per_rank = (h.levels + (h.folds() ? 1 : 0)) * whole,
          .critical_path_bytes = depth * whole};
}

// broadcast_chain.cpp: R-1 hops of the whole buffer in m pipelined segments, each hop on a
// link of its own, so the last segment leaves the root after m-1 others and then crosses
// R-1 links: (R-2+m) segment times. (Cost::segments pipelines one link's steps, as in the
// ring; here the pipeline is in the bytes on the critical path.)
Cost chain_cost(int world, size_t count) {
  const double whole = count * kFloat;
  const int m = ring_segments(count);
  return {.steps = world - 1,
          .bytes_sent_per_rank = whole,
          .critical_path_bytes = (world - 2 + m) * whole / m};
}

Cost ring_cost(int steps, double piece_bytes) {
  return {.steps = steps,
          .bytes_sent_per_rank = steps * piece_bytes,
          .critical_path_bytes = steps * piece_bytes};
}

}  // namespace

double Cost::predict_s(double alpha_s, double bandwidth_Bps) const {
  const double transfer_s = bandwidth_Bps > 0 ? critical_path_bytes / bandwidth_Bps : 0.0;
  if (segments <= 1 || steps == 0) return steps * alpha_s + transfer_s;
  const double b = transfer_s / (steps * segments);  // one segment on one link
  return std::max(steps * segments * b + alpha_s, steps * alpha_s + (steps + segments - 1) * b);
}

double Cost::predict_switch_s(double alpha_s, double bandwidth_Bps) const {
  if (switch_path_bytes == 0) return predict_s(alpha_s, bandwidth_Bps);
  Cost shared = *this;
  shared.critical_path_bytes = switch_path_bytes;
  return shared.predict_s(alpha_s, bandwidth_Bps);
}

Cost collective_cost(CollectiveOp op, Algorithm algorithm, int world, size_t bytes) {
  if (world < 1)
    throw UsageError(
        fmt::format("cost of {}: a world of {} ranks; use 1 or more", to_string(op), world));
  const Algorithm a = resolve_algorithm(op, algorithm, world, bytes);
  if (world == 1) return {};
  const size_t count = bytes / sizeof(float);
  const double whole = count * kFloat;
  const double piece = count / world * kFloat;  // c floats: one rank's row
  switch (op) {
    case CollectiveOp::broadcast:
      if (a == Algorithm::ring) return chain_cost(world, count);
      return tree_cost(world, whole, false, true);
    case CollectiveOp::reduce:
      return tree_cost(world, whole, true, false);
    case CollectiveOp::gather:
      return {.steps = 1,
              .bytes_sent_per_rank = piece,
              .critical_path_bytes = piece,
              .switch_path_bytes = (world - 1) * piece};
    case CollectiveOp::scatter:
      return {.steps = 1,
              .bytes_sent_per_rank = (world - 1) * piece,
              .critical_path_bytes = piece,
              .switch_path_bytes = (world - 1) * piece};
    case CollectiveOp::all_gather:
    case CollectiveOp::reduce_scatter:
      return ring_cost(world - 1, piece);
    case CollectiveOp::barrier:  // ceil(log2 R) rounds of empty messages
      return {.steps = static_cast<int>(std::bit_width(static_cast<unsigned>(world - 1)))};
    case CollectiveOp::all_reduce:
      break;
  }
  switch (a) {
    case Algorithm::naive:
      return {.steps = 2,
              .bytes_sent_per_rank = (world - 1) * whole,
              .critical_path_bytes = 2 * whole,
              .switch_path_bytes = 2 * (world - 1) * whole};
    case Algorithm::tree:
      return tree_cost(world, whole, true, true);
    case Algorithm::halving_doubling:
      return halving_doubling_cost(world, count);
    case Algorithm::recursive_doubling:
      return recursive_doubling_cost(world, count);
    case Algorithm::ring:
    case Algorithm::automatic:
    case Algorithm::native:
      break;
  }
  const RingSchedule schedule = RingSchedule::of(count, world);
  Cost ring = ring_cost(schedule.steps(), Chunks{count, world}.max_size() * kFloat);
  ring.segments = schedule.segments;
  return ring;
}

std::string cost_formula(CollectiveOp op, Algorithm algorithm) {
  switch (op) {
    case CollectiveOp::broadcast:
      if (algorithm == Algorithm::ring)
        return "(R-1) * (a + S/B); over 4 MiB in m pipelined pieces: (R-1) a + (R-2+m) S/m/B";
      return "D * (a + S/B), D = max popcount(v < R) <= ceil(log2 R)";
    case CollectiveOp::reduce:
      return "D * (a + S/B), D = max popcount(v < R) <= ceil(log2 R)";
    case CollectiveOp::gather:
      return "a + S/R/B; the root receives (R-1)/R S";
    case CollectiveOp::scatter:
      return "a + S/R/B; the root sends (R-1)/R S";
    case CollectiveOp::all_gather:
    case CollectiveOp::reduce_scatter:
      return "(R-1) * (a + S/R/B)";
    case CollectiveOp::barrier:
      return "ceil(log2 R) * a";
    case CollectiveOp::all_reduce:
      break;
  }
  switch (algorithm) {
    case Algorithm::naive:
      return "2 * (a + S/B); rank 0 sends (R-1) S";
    case Algorithm::tree:
      return "2D * (a + S/B), D = max popcount(v < R) <= ceil(log2 R)";
    case Algorithm::halving_doubling:
      return "2 log2(P) a + 2(P-1)/P S/B, + 2(a + S/B) if R != P = 2^floor(log2 R)";
    case Algorithm::recursive_doubling:
      return "log2(P) (a + S/B), + 1 or 2 (a + S/B) for the fold if R != P = 2^floor(log2 R)";
    case Algorithm::ring:
      return "2(R-1) * (a + S/R/B); chunks over 4 MiB go in pipelined pieces that hide latency";
    case Algorithm::automatic:
    case Algorithm::native:
      break;
  }
  return "the cheapest of ring, halving_doubling and tree for a nominal link";
}

}  // namespace dsgd
