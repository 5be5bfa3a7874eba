#include "core/comm/collective_tags.h"

#include <fmt/format.h>

namespace dsgd {
namespace {

namespace t = collective_tag;
constexpr CollectiveTag kTags[] = {
    {t::kBroadcast, CollectiveOp::broadcast, Algorithm::tree, "broadcast"},
    {t::kReduce, CollectiveOp::reduce, Algorithm::tree, "reduce"},
    {t::kAllReduceNaive, CollectiveOp::all_reduce, Algorithm::naive, "all_reduce naive"},
    {t::kAllReduceRing, CollectiveOp::all_reduce, Algorithm::ring, "all_reduce ring"},
    {t::kBarrier, CollectiveOp::barrier, Algorithm::automatic, "barrier"},
    {t::kAllReduceTree, CollectiveOp::all_reduce, Algorithm::tree, "all_reduce tree"},
    {t::kAllReduceHalvingDoubling, CollectiveOp::all_reduce, Algorithm::halving_doubling,
     "all_reduce halving_doubling"},
    {t::kGather, CollectiveOp::gather, Algorithm::naive, "gather"},
    {t::kScatter, CollectiveOp::scatter, Algorithm::naive, "scatter"},
    {t::kAllGather, CollectiveOp::all_gather, Algorithm::ring, "all_gather"},
    {t::kReduceScatter, CollectiveOp::reduce_scatter, Algorithm::ring, "reduce_scatter"},
    {t::kBroadcastRing, CollectiveOp::broadcast, Algorithm::ring, "broadcast ring"},
    {t::kAllReduceRecursiveDoubling, CollectiveOp::all_reduce, Algorithm::recursive_doubling,
     "all_reduce recursive_doubling"},
};

}  // namespace

const CollectiveTag* find_collective_tag(int tag) {
  for (const CollectiveTag& c : kTags)
    if (c.tag == tag) return &c;
  return nullptr;
}

const CollectiveTag* find_collective_tag(CollectiveOp op, Algorithm algorithm) {
  for (const CollectiveTag& c : kTags)
    if (c.op == op && c.algorithm == algorithm) return &c;
  return nullptr;
}

const char* tag_label(int tag) {
  if (const CollectiveTag* c = find_collective_tag(tag)) return c->label;
  return tag >= kCollectiveTagBase ? "collective" : "p2p";
}

std::string tag_text(int tag) {
  if (tag < kCollectiveTagBase) return fmt::format("tag {}", tag);
  if (const CollectiveTag* c = find_collective_tag(tag)) return c->label;
  return fmt::format("reserved tag {}", tag);
}

}  // namespace dsgd
