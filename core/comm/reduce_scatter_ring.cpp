// Ring reduce-scatter: R-1 steps around the ring r -> r+1. The partial sum of row i
// starts on rank i+1, travels right collecting every rank's row i, and ends on rank i.
// R = world size, c = elements per rank; send is (R, c), recv is (c).
// In step s rank r sends its partial of row (r - s - 1) and receives the partial of row
// (r - s - 2), to which it adds its own row. send is never written: the partials live in
// two scratch buffers used in turn (one may still be in flight while the other fills).
// Cost: R-1 steps of c floats each: every rank sends (R-1)/R of the (R, c) input.
#include <vector>

#include "core/comm/collectives.h"

namespace dsgd {

void reduce_scatter_ring(Communicator& comm, std::span<const float> send, std::span<float> recv,
                         Reduction op) {
  const int n = comm.size();
  const int r = comm.rank();
  const size_t c = recv.size();
  const int right = (r + 1) % n, left = (r - 1 + n) % n;
  const int tag = collective_tag::kReduceScatter;
  auto row = [&](int i) { return send.subspan(((i % n + n) % n) * c, c); };
  std::span<const float> outgoing = row(r - 1);  // step 0: our own row, no copy
  for (int s = 0; s < n - 1; ++s) {
    const bool last = s == n - 2;
    // Two scratch slots in turn; the last partial, of row r itself, lands in recv.
    std::span<float> in = last ? recv : comm.scratch(c, s % 2);
    Request next = comm.isend(outgoing, right, tag);
    comm.recv(in, left, tag);
    reduce_into(in, row(r - s - 2), op);
    // Only now may the buffer sent in the previous step be filled again (next step).
    next.wait();
    outgoing = in;
  }
  finish_reduce(recv, op, n);  // row r is complete here and nowhere else
}

}  // namespace dsgd
