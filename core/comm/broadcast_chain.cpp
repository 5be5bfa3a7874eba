// Chain broadcast along the ring: the root sends to root+1, which passes it on to root+2,
// and so on to root-1 (no wrap-around). R = world size, v = this rank relative to the root
// ((r - root) mod R), S = bytes, m = segments. It talks only over the ring's pairs (r, r+1),
// so a run whose gradients use the ring all_reduce opens no other connection for it.
// Pipelined like the ring all_reduce: a buffer over kRingSegmentFloats goes as m messages,
// each passed on as soon as it arrives. Cost: latencies and (R-2+m) S/m / B: the
// latency grows with R (the binomial tree's with log R), the bandwidth term does not.
#include <vector>

#include "core/comm/chunks.h"
#include "core/comm/collectives.h"

namespace dsgd {

void broadcast_chain(Communicator& comm, std::span<float> data, int root, int tag) {
  const int n = comm.size();
  const int v = (comm.rank() - root + n) % n;
  const int next = (comm.rank() + 1) % n, prev = (comm.rank() - 1 + n) % n;
  const int segments = ring_segments(data.size());
  const Chunks parts{data.size(), segments};
  auto segment = [&](int k) { return data.subspan(parts.offset(k), parts.size(k)); };
  // Every receive is posted first, so each segment lands in place whenever it comes.
  std::vector<Request> receives;
  if (v > 0)
    for (int k = 0; k < segments; ++k)
      receives.push_back(comm.irecv(segment(k), prev, tag));
  std::vector<Request> sends;
  for (int k = 0; k < segments; ++k) {
    if (v > 0) receives[k].wait();
    if (v + 1 < n) sends.push_back(comm.isend(segment(k), next, tag));
  }
  for (Request& s : sends)
    s.wait();
}

}  // namespace dsgd
