// Ring all-reduce: reduce-scatter then all-gather around the ring r -> r+1.
// R = world size, C = element count, chunk i = elements [off(i), off(i+1)), sizes differ
// by at most one (any C works, including C < R, where some chunks are empty).
// Cost: 2(R-1) steps, each sending C/R elements to the right neighbour: every rank sends
// 2(R-1)/R of the buffer, independent of R — bandwidth-optimal, latency grows with R.
#include <algorithm>
#include <vector>

#include "core/comm/chunks.h"
#include "core/comm/collectives.h"

namespace dsgd {

void all_reduce_ring(Communicator& comm, std::span<float> data, ReduceOp op) {
  const int n = comm.size();
  const int r = comm.rank();
  if (n == 1) {
    finish_reduce(data, op, 1);
    return;
  }
  const int right = (r + 1) % n, left = (r - 1 + n) % n;
  const int tag = collective_tag::kAllReduceRing;
  const Chunks chunks{data.size(), n};
  auto chunk = [&](int i) { return data.subspan(chunks.offset(i), chunks.size(i)); };
  const std::span<float> incoming = comm.scratch(chunks.size(0));

  // Reduce-scatter: after step s, chunk (r - s - 1) holds the sum of s + 2 ranks' values.
  // We may overwrite chunk (r - s - 1) while chunk (r - s) is still being sent: they
  // differ, and the send is waited for before the next step reuses anything.
  for (int s = 0; s < n - 1; ++s) {
    const int send_i = (r - s + n) % n, recv_i = (r - s - 1 + n) % n;
    Request sent = comm.isend(chunk(send_i), right, tag);
    std::span<float> in(incoming.data(), chunks.size(recv_i));
    comm.recv(in, left, tag);
    reduce_into(chunk(recv_i), in, op);
    sent.wait();
  }
  // Rank r now owns the complete chunk (r + 1); finish AVG once, on the owner, so every
  // rank ends with bit-identical values.
  finish_reduce(chunk((r + 1) % n), op, n);
  // All-gather: pass the complete chunks around; each lands directly in place.
  for (int s = 0; s < n - 1; ++s) {
    const int send_i = (r + 1 - s + n) % n, recv_i = (r - s + n) % n;
    Request sent = comm.isend(chunk(send_i), right, tag);
    comm.recv(chunk(recv_i), left, tag);
    sent.wait();
  }
}

}  // namespace dsgd
