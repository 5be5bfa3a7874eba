// R = world, m = the sender's message ordinal in its collective, D = ceil(log2 R) levels of
// a binomial tree (rank 0 the root of the tree all_reduce).
#include "core/comm/message_phase.h"

#include <algorithm>

#include "core/comm/chunks.h"
#include "core/comm/halving_doubling_schedule.h"
#include "core/comm/ring_schedule.h"

namespace dsgd {
namespace {

int log2_floor(int x) {
  int l = 0;
  while ((2 << l) <= x)
    ++l;
  return l;
}

int tree_levels(int world) {
  int d = 0;
  while ((1 << d) < world)
    ++d;
  return d;
}

MessagePhase ring_all_reduce(MessagePhase p, int world, int src, int m, size_t count) {
  const RingSchedule ring = RingSchedule::of(count, world);
  p.steps = ring.steps();
  p.segments = ring.segments;
  if (m >= ring.messages()) return p;
  const int s = ring.step_of(m);
  p.phase = ring.reducing(s) ? Phase::reduce_scatter : Phase::all_gather;
  p.step = s;
  p.phase_steps = world - 1;
  p.phase_step = s % (world - 1);
  p.segment = ring.segment_of(m);
  p.chunk = ring.sent_chunk(src, s);
  p.contributions = ring.sent_contributions(s);
  return p;
}

MessagePhase halving_doubling(MessagePhase p, int world, int src, int m) {
  const HalvingDoubling h = HalvingDoubling::of(world);
  p.steps = h.steps();
  const int v = h.core_rank(src);
  if (v < 0) {  // an even rank below 2E sends once: the fold
    if (m == 0) p.phase = Phase::fold, p.step = 0, p.contributions = 1;
  } else if (m < h.levels) {
    p.phase = Phase::reduce_scatter;
    p.step = h.exchange_step(m);
    p.contributions = h.held_before_halving(v, m);
  } else if (m < 2 * h.levels) {
    p.phase = Phase::all_gather;
    p.step = h.exchange_step(m);
    p.contributions = world;
  } else if (m == 2 * h.levels && src < 2 * h.extra) {
    p.phase = Phase::unfold;
    p.step = h.steps() - 1;
    p.contributions = world;
  }
  const bool exchange = p.phase == Phase::reduce_scatter || p.phase == Phase::all_gather;
  p.phase_steps = exchange ? h.levels : 1;
  p.phase_step = exchange ? m % h.levels : 0;
  if (p.phase == Phase::unknown) p.phase_step = -1, p.phase_steps = 0;
  return p;
}

// Recursive doubling: the fold, L exchanges of whole buffers, the unfold, with the ranks
// of halving-doubling.
MessagePhase recursive_doubling(MessagePhase p, int world, int src, int m) {
  const HalvingDoubling h = HalvingDoubling::of(world);
  const int folds = h.folds() ? 1 : 0;
  p.steps = h.levels + 2 * folds;
  const int v = h.core_rank(src);
  if (v < 0) {  // an even rank below 2E sends once: the fold
    if (m == 0) p.phase = Phase::fold, p.step = 0, p.contributions = 1;
  } else if (m < h.levels) {
    p.phase = Phase::exchange;
    p.step = m + folds;
    p.phase_step = m;
    p.phase_steps = h.levels;
    p.contributions = h.held_before_doubling(v, m);
  } else if (m == h.levels && src < 2 * h.extra) {
    p.phase = Phase::unfold;
    p.step = p.steps - 1;
    p.contributions = world;
  }
  if (p.phase == Phase::fold || p.phase == Phase::unfold) p.phase_step = 0, p.phase_steps = 1;
  return p;
}

// Binomial trees: a child is its parent + mask (relative to the root), mask a power of two,
// so the mask is the distance between the two ranks whatever the root. `then_broadcast`: the
// tree all_reduce (root 0), a reduce whose broadcast follows in steps D..2D-1.
MessagePhase binomial(MessagePhase p, int world, int src, int dst, bool towards_root,
                      bool then_broadcast) {
  const int levels = tree_levels(world);
  p.steps = then_broadcast ? 2 * levels : levels;
  p.phase_steps = levels;
  if (towards_root) {
    const int mask = ring_mod(src - dst, world);
    p.phase = Phase::reduce;
    p.step = p.phase_step = log2_floor(mask);
    if (then_broadcast) p.contributions = std::min(mask, world - src);  // src's subtree
  } else {
    const int mask = ring_mod(dst - src, world);
    p.phase = Phase::broadcast;
    p.phase_step = levels - 1 - log2_floor(mask);
    p.step = (then_broadcast ? levels : 0) + p.phase_step;
    if (then_broadcast) p.contributions = world;
  }
  return p;
}

MessagePhase all_reduce_phase(MessagePhase p, int world, int src, int dst, int m, size_t count) {
  switch (p.collective->algorithm) {
    case Algorithm::ring:
      return ring_all_reduce(p, world, src, m, count);
    case Algorithm::halving_doubling:
      return halving_doubling(p, world, src, m);
    case Algorithm::recursive_doubling:
      return recursive_doubling(p, world, src, m);
    case Algorithm::tree:
      return binomial(p, world, src, dst, dst < src, true);
    case Algorithm::naive:
      p.steps = 2;
      p.phase = src == 0 ? Phase::from_root : Phase::to_root;
      p.step = src == 0 ? 1 : 0;
      p.phase_step = 0;
      p.phase_steps = 1;
      p.contributions = src == 0 ? world : 1;
      return p;
    case Algorithm::automatic:
    case Algorithm::native:
      break;
  }
  return p;
}

// The ring all_gather and reduce_scatter: step m carries row r-m (all_gather, one rank's) or
// the partial of row r-m-1 (reduce_scatter, m+1 ranks').
MessagePhase ring_rows(MessagePhase p, int world, int src, int m, bool reducing) {
  p.steps = world - 1;
  if (m >= p.steps) return p;
  p.phase = reducing ? Phase::reduce_scatter : Phase::all_gather;
  p.step = p.phase_step = m;
  p.phase_steps = p.steps;
  p.chunk = ring_mod(src - m - (reducing ? 1 : 0), world);
  p.contributions = reducing ? m + 1 : 1;
  return p;
}

// The chain broadcast (broadcast_chain.cpp): every rank but the last sends each of the
// buffer's segments once, to the next rank, so its m-th message is segment m. Which hop of
// the chain it is depends on the root, which the message does not say.
MessagePhase chain(MessagePhase p, int m, size_t count) {
  p.steps = p.segments = ring_segments(count);
  if (m >= p.steps) return p;
  p.phase = Phase::broadcast;
  p.step = p.segment = p.phase_step = m;
  p.phase_steps = p.steps;
  return p;
}

MessagePhase direct(MessagePhase p, Phase phase) {
  p.phase = phase;
  p.step = p.phase_step = 0;
  p.steps = p.phase_steps = 1;
  return p;
}

}  // namespace

const char* to_string(Phase phase) {
  switch (phase) {
    case Phase::p2p:
      return "p2p";
    case Phase::reduce_scatter:
      return "reduce-scatter";
    case Phase::all_gather:
      return "all-gather";
    case Phase::fold:
      return "fold";
    case Phase::unfold:
      return "unfold";
    case Phase::exchange:
      return "exchange";
    case Phase::reduce:
      return "reduce";
    case Phase::broadcast:
      return "broadcast";
    case Phase::to_root:
      return "to root";
    case Phase::from_root:
      return "from root";
    case Phase::round:
      return "round";
    case Phase::unknown:
      break;
  }
  return "unknown";
}

MessagePhase message_phase(int tag, int world, int src, int dst, int m, size_t count) {
  MessagePhase p;
  p.collective = find_collective_tag(tag);
  if (!p.collective) return p;
  p.phase = Phase::unknown;
  if (world < 2 || m < 0) return p;
  switch (p.collective->op) {
    case CollectiveOp::all_reduce:
      return all_reduce_phase(p, world, src, dst, m, count);
    case CollectiveOp::broadcast:
      if (p.collective->algorithm == Algorithm::ring) return chain(p, m, count);
      return binomial(p, world, src, dst, false, false);
    case CollectiveOp::reduce:
      return binomial(p, world, src, dst, true, false);
    case CollectiveOp::gather:
      return direct(p, Phase::to_root);
    case CollectiveOp::scatter:
      return direct(p, Phase::from_root);
    case CollectiveOp::all_gather:
      return ring_rows(p, world, src, m, false);
    case CollectiveOp::reduce_scatter:
      return ring_rows(p, world, src, m, true);
    case CollectiveOp::barrier:
      p.phase = Phase::round;
      p.step = p.phase_step = m;
      p.steps = p.phase_steps = tree_levels(world);
      return p;
  }
  return p;
}

}  // namespace dsgd
