// R = world size, v = a rank relative to the root, P = 2^floor(log2 R), E = R - P.
#include "core/comm/collective_pairs.h"

#include <algorithm>
#include <iterator>

#include "core/comm/halving_doubling_schedule.h"

namespace dsgd {
namespace {

class PairList {
 public:
  void add(int x, int y) {
    if (x != y) pairs_.push_back({std::min(x, y), std::max(x, y)});
  }
  std::vector<RankPair> take() {
    std::sort(pairs_.begin(), pairs_.end());
    pairs_.erase(std::unique(pairs_.begin(), pairs_.end()), pairs_.end());
    return std::move(pairs_);
  }

 private:
  std::vector<RankPair> pairs_;
};

// r with r + 1 (mod R): the ring all_reduce, all_gather and reduce_scatter. The chain
// broadcast leaves out the pair that would close it at the root.
std::vector<RankPair> ring_pairs(int world, bool closed, int root) {
  PairList out;
  for (int v = 0; v + 1 < world + (closed ? 1 : 0); ++v)
    out.add((root + v) % world, (root + v + 1) % world);
  return out.take();
}

// Binomial tree (broadcast_binomial.cpp, reduce_binomial.cpp): v's parent is v less its
// lowest set bit.
std::vector<RankPair> tree_pairs(int world, int root) {
  PairList out;
  for (int v = 1; v < world; ++v)
    out.add((v + root) % world, ((v & (v - 1)) + root) % world);
  return out.take();
}

// The root with every other rank: naive all_reduce, gather, scatter.
std::vector<RankPair> star_pairs(int world, int root) {
  PairList out;
  for (int r = 0; r < world; ++r)
    out.add(root, r);
  return out.take();
}

// halving_doubling_schedule.h: the folds 2i with 2i+1 (i < E), and core rank v with v ^ d
// (halving-doubling and recursive doubling).
std::vector<RankPair> halving_doubling_pairs(int world) {
  const HalvingDoubling h = HalvingDoubling::of(world);
  PairList out;
  for (int i = 0; i < h.extra; ++i)
    out.add(2 * i, 2 * i + 1);
  for (int v = 0; v < h.pow2; ++v)
    for (int d = 1; d < h.pow2; d <<= 1)
      out.add(h.real_rank(v), h.real_rank(v ^ d));
  return out.take();
}

// barrier_dissemination.cpp: r with r + 2^k for every 2^k < R.
std::vector<RankPair> dissemination_pairs(int world) {
  PairList out;
  for (int r = 0; r < world; ++r)
    for (int d = 1; d < world; d <<= 1)
      out.add(r, (r + d) % world);
  return out.take();
}

}  // namespace

std::vector<RankPair> collective_pairs(CollectiveOp op, Algorithm algorithm, int world,
                                       size_t bytes, int root) {
  const Algorithm a = resolve_algorithm(op, algorithm, world, bytes);
  if (world < 2) return {};
  switch (op) {
    case CollectiveOp::broadcast:
      return a == Algorithm::ring ? ring_pairs(world, false, root) : tree_pairs(world, root);
    case CollectiveOp::reduce:
      return tree_pairs(world, root);
    case CollectiveOp::gather:
    case CollectiveOp::scatter:
      return star_pairs(world, root);
    case CollectiveOp::all_gather:
    case CollectiveOp::reduce_scatter:
      return ring_pairs(world, true, 0);
    case CollectiveOp::barrier:
      return dissemination_pairs(world);
    case CollectiveOp::all_reduce:
      break;
  }
  switch (a) {
    case Algorithm::naive:
      return star_pairs(world, 0);
    case Algorithm::tree:
      return tree_pairs(world, 0);
    case Algorithm::halving_doubling:
    case Algorithm::recursive_doubling:  // the same folds and partners, whole buffers
      return halving_doubling_pairs(world);
    case Algorithm::ring:
    case Algorithm::automatic:  // resolved above; never here
    case Algorithm::native:
      break;
  }
  return ring_pairs(world, true, 0);
}

Algorithm broadcast_along(Algorithm all_reduce_algorithm) {
  return all_reduce_algorithm == Algorithm::ring ? Algorithm::ring : Algorithm::tree;
}

void merge_pairs(std::vector<RankPair>& into, const std::vector<RankPair>& more) {
  std::vector<RankPair> out;
  out.reserve(into.size() + more.size());
  std::set_union(into.begin(), into.end(), more.begin(), more.end(), std::back_inserter(out));
  into = std::move(out);
}

}  // namespace dsgd
