// Which rank pairs each collective algorithm exchanges messages over, in one place beside
// the schedules it follows: what a transport that connects pairs when they first talk
// (the simulated nodes) costs a run, and which broadcast keeps to an all_reduce's pairs.
// Not a schedule: no order, no sizes, no direction.
// R = world size; a pair {a, b} (a < b) is one connection, carrying both directions.
#pragma once

#include <compare>
#include <cstddef>
#include <vector>

#include "core/comm/collectives.h"

namespace dsgd {

struct RankPair {
  int a = 0, b = 0;  // a < b
  auto operator<=>(const RankPair&) const = default;
};

// The pairs `op` run with `algorithm` (resolved as resolve_algorithm resolves it for
// `bytes`) talks over on `world` ranks, `root` being the root of broadcast, reduce, gather
// and scatter (the tree and naive all_reduce's root is 0). Sorted, each once.
std::vector<RankPair> collective_pairs(CollectiveOp op, Algorithm algorithm, int world,
                                       size_t bytes, int root = 0);

// The broadcast algorithm whose pairs lie within those of all_reduce `algorithm` (resolved)
// where one does: ring for the ring (a chain along it), else tree, which is the tree
// all_reduce's own and lies within halving_doubling's when R is a power of two.
Algorithm broadcast_along(Algorithm all_reduce_algorithm);

// `into` becomes the sorted union of `into` and `more`.
void merge_pairs(std::vector<RankPair>& into, const std::vector<RankPair>& more);

}  // namespace dsgd
