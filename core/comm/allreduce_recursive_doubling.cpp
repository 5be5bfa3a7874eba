// Recursive-doubling all-reduce (MPICH's and Open MPI's choice for short messages).
// R = world size, P = the largest power of two <= R, E = R - P extra ranks, S = bytes.
//   1. Fold, as halving-doubling folds (halving_doubling_schedule.h): each even rank below
//      2E sends its whole buffer to the odd rank above it and sits out.
//   2. At distance d = 1, 2, ..., P/2, core rank v and v^d swap their whole buffers and
//      each adds the other's to its own. After log2 P steps every core rank holds the
//      reduction over all R ranks, and the same bits: a + b == b + a in floating point,
//      and partners add the same two values at every step.
//   3. Every core rank finishes AVG on its own copy, which is the same on all of them.
//   4. Unfold: each odd rank below 2E sends the result to the even rank it folded.
// Steps 1 and 4 are fold_pairs.h's, which halving-doubling shares.
// Cost: log2 P steps (+2 when E > 0) of S bytes each: half the latencies of
// halving-doubling, but every step carries the whole buffer, so it suits small messages.
#include "core/comm/collectives.h"
#include "core/comm/fold_pairs.h"
#include "core/comm/halving_doubling_schedule.h"

namespace dsgd {

void all_reduce_recursive_doubling(Communicator& comm, std::span<float> data, Reduction op) {
  const int tag = collective_tag::kAllReduceRecursiveDoubling;
  const HalvingDoubling h = HalvingDoubling::of(comm.size());  // also how traces label it
  if (!fold_in(comm, h, data, tag, op)) return;                // 1 and 4 on the rank that sits out
  const int v = h.core_rank(comm.rank());
  const std::span<float> incoming = comm.scratch(data.size());
  for (int d = 1; d < h.pow2; d *= 2) {
    const int partner = h.real_rank(v ^ d);
    Request sent = comm.isend(data, partner, tag);
    comm.recv(incoming, partner, tag);
    sent.wait();  // data is read until then
    reduce_into(data, incoming, op);
  }
  finish_reduce(data, op, comm.size());
  unfold(comm, h, data, tag);
}

}  // namespace dsgd
