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
// Cost: log2 P steps (+2 when E > 0) of S bytes each: half the latencies of
// halving-doubling, but every step carries the whole buffer, so it suits small messages.
#include "core/comm/collectives.h"
#include "core/comm/halving_doubling_schedule.h"

namespace dsgd {

void all_reduce_recursive_doubling(Communicator& comm, std::span<float> data, Reduction op) {
  const int n = comm.size();
  const int r = comm.rank();
  const int tag = collective_tag::kAllReduceRecursiveDoubling;
  const HalvingDoubling h = HalvingDoubling::of(n);  // also how traces label it
  const int v = h.core_rank(r);
  const bool folded = r < 2 * h.extra;
  if (v < 0) {  // 1 and 4 on the side of the rank that sits out
    comm.send(data, r + 1, tag);
    comm.recv(data, r + 1, tag);
    return;
  }
  const std::span<float> incoming = comm.scratch(data.size());
  if (folded) {
    comm.recv(incoming, r - 1, tag);
    reduce_into(data, incoming, op);
  }
  for (int d = 1; d < h.pow2; d *= 2) {
    const int partner = h.real_rank(v ^ d);
    Request sent = comm.isend(data, partner, tag);
    comm.recv(incoming, partner, tag);
    sent.wait();  // data is read until then
    reduce_into(data, incoming, op);
  }
  finish_reduce(data, op, n);
  if (folded) comm.send(data, r - 1, tag);
}

}  // namespace dsgd
