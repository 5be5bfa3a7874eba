// Halving-doubling all-reduce (Rabenseifner; the MPICH scheme for any rank count).
// R = world size, P = the largest power of two <= R, E = R - P extra ranks, C = element
// count, S = bytes. The buffer is cut into P blocks (Chunks: sizes differ by at most one,
// any C works, including C < P where some blocks are empty).
//   1. Fold: among ranks 0..2E-1, each even rank sends its whole buffer to the odd rank
//      above it and sits out; the odd rank reduces it in. P ranks remain, numbered
//      v = r/2 (odd r < 2E) or r - E (r >= 2E).
//   2. Reduce-scatter by recursive halving: at distance d = P/2, P/4, ..., 1, rank v and
//      v^d exchange halves of the blocks they still hold; the lower keeps the lower half.
//      After log2 P steps rank v holds block v, reduced over all R ranks.
//   3. Finish AVG on block v, once, on its owner, so every rank gets the same bits.
//   4. All-gather by recursive doubling, the mirror of 2: d = 1, 2, ..., P/2.
//   5. Unfold: each odd rank below 2E sends the result to the even rank it folded.
// Steps 1 and 5 are fold_pairs.h's, which recursive doubling shares.
// Cost: 2 log2 P steps (+2 when E > 0), 2(P-1)/P S bytes per core rank (+2S on the folded
// path): latency of a tree, bandwidth of a ring when R is a power of two.
#include <vector>

#include "core/comm/chunks.h"
#include "core/comm/collectives.h"
#include "core/comm/fold_pairs.h"
#include "core/comm/halving_doubling_schedule.h"

namespace dsgd {

void all_reduce_halving_doubling(Communicator& comm, std::span<float> data, Reduction op) {
  const int n = comm.size();
  const int r = comm.rank();
  const int tag = collective_tag::kAllReduceHalvingDoubling;
  const HalvingDoubling h = HalvingDoubling::of(n);  // also how traces label it
  const int p = h.pow2;
  if (!fold_in(comm, h, data, tag, op)) return;  // 1 and 5 on the rank that sits out
  const int v = h.core_rank(r);
  const Chunks blocks{data.size(), p};
  auto range = [&](int first, int last) {
    return data.subspan(blocks.offset(first), blocks.span_size(first, last));
  };
  // 2. Reduce-scatter. Invariant: this rank holds blocks [lo, hi), hi - lo = 2d, and
  // its partner v^d holds the same range. We send the half we give up straight from
  // data: nothing writes to it again until the all-gather, after this send is waited.
  const std::span<float> incoming = comm.scratch(blocks.span_size(0, p / 2));
  int lo = 0, hi = p;
  for (int d = p / 2; d >= 1; d /= 2) {
    const int mid = lo + d;
    const bool upper = (v & d) != 0;
    const int keep_lo = upper ? mid : lo, keep_hi = upper ? hi : mid;
    const int give_lo = upper ? lo : mid, give_hi = upper ? mid : hi;
    const int partner = h.real_rank(v ^ d);
    Request sent = comm.isend(range(give_lo, give_hi), partner, tag);
    std::span<float> keep = range(keep_lo, keep_hi);
    std::span<float> in(incoming.data(), keep.size());
    comm.recv(in, partner, tag);
    reduce_into(keep, in, op);
    sent.wait();
    lo = keep_lo;
    hi = keep_hi;
  }
  // 3. lo == v: block v is complete here and nowhere else.
  finish_reduce(range(lo, hi), op, n);
  // 4. All-gather. Invariant: this rank holds the final blocks [lo, hi), hi - lo = d;
  // the partner holds the neighbouring d blocks, which land directly in place.
  for (int d = 1; d < p; d *= 2) {
    const bool upper = (v & d) != 0;
    const int other_lo = upper ? lo - d : hi, other_hi = other_lo + d;
    const int partner = h.real_rank(v ^ d);
    Request sent = comm.isend(range(lo, hi), partner, tag);
    comm.recv(range(other_lo, other_hi), partner, tag);
    sent.wait();
    lo = std::min(lo, other_lo);
    hi = std::max(hi, other_hi);
  }
  unfold(comm, h, data, tag);
}

}  // namespace dsgd
