// Tree all-reduce: binomial-tree reduce to rank 0, then binomial-tree broadcast from it.
// R = world size, S = bytes, D = max popcount(v < R) <= ceil(log2 R), the tree's depth.
// Cost: 2D steps of a whole buffer each: latency grows with log R like halving-doubling,
// but every hop carries all S bytes, so it loses on large buffers.
// Rank 0 finishes AVG once, then sends the same bits to everyone.
#include "core/comm/collectives.h"

namespace dsgd {

void all_reduce_tree(Communicator& comm, std::span<float> data, Reduction op) {
  const int tag = collective_tag::kAllReduceTree;
  // data is everyone's scratch: it is overwritten by the broadcast anyway.
  reduce_binomial(comm, data, op, 0, tag);
  if (comm.rank() == 0) finish_reduce(data, op, comm.size());
  broadcast_binomial(comm, data, 0, tag);
}

}  // namespace dsgd
