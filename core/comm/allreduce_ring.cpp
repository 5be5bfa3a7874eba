// Ring all-reduce: reduce-scatter then all-gather around the ring r -> r+1.
// R = world size, C = element count, chunk i = elements [off(i), off(i+1)), sizes differ
// by at most one (any C works, including C < R, where some chunks are empty).
// Cost: 2(R-1) steps, each sending C/R elements to the right neighbour: every rank sends
// 2(R-1)/R of the buffer, independent of R — bandwidth-optimal, latency grows with R.
//
// Pipelined, as MPI libraries and NCCL do it: a chunk over kRingSegmentFloats travels as
// several messages (segments), and each segment is reduced and passed on as soon as it
// arrives, so a rank sends the first part of a chunk while the rest is still coming in.
// The bytes are the same; the latency of each step and the reduction hide behind the
// transfer. Chunks that small (every lesson's) go whole, one message a step.
#include <algorithm>
#include <vector>

#include "core/comm/chunks.h"
#include "core/comm/collectives.h"
#include "core/comm/ring_schedule.h"

namespace dsgd {

void all_reduce_ring(Communicator& comm, std::span<float> data, Reduction op) {
  const int n = comm.size();
  const int r = comm.rank();
  if (n == 1) {
    finish_reduce(data, op, 1);
    return;
  }
  const int right = (r + 1) % n, left = (r - 1 + n) % n;
  const int tag = collective_tag::kAllReduceRing;
  const Chunks chunks{data.size(), n};
  const RingSchedule ring = RingSchedule::of(data.size(), n);  // also how traces label it
  const int segments = ring.segments;
  auto segment = [&](int i, int k) {
    const Chunks parts{chunks.size(i), segments};
    return data.subspan(chunks.offset(i) + parts.offset(k), parts.size(k));
  };
  // A whole chunk of scratch: every segment of a step has its receive posted before the
  // first is waited for, so each lands straight in its buffer whenever it comes.
  const std::span<float> incoming = comm.scratch(chunks.max_size());

  // Step s < R-1 (reduce-scatter) receives chunk (r - s - 1), adds it to ours, and sends it
  // on in step s+1; after step R-2 chunk (r + 1) holds every rank's values. Step s >= R-1
  // (all-gather) receives a complete chunk straight into place and sends it on. So every
  // step sends what the step before received, and step 0 sends our own chunk r.
  const int steps = ring.steps();
  std::vector<std::vector<Request>> sent(steps);
  std::vector<Request> receives(segments);
  for (int k = 0; k < segments; ++k)
    sent[0].push_back(comm.isend(segment(ring.sent_chunk(r, 0), k), right, tag));
  for (int s = 0; s < steps; ++s) {
    const bool reducing = ring.reducing(s);
    // The all-gather overwrites chunk (r - s + R - 1), which reduce-scatter step s - R + 1
    // sent: that send must be complete first (a backend may read the buffer until then).
    if (!reducing)
      for (Request& q : sent[s - (n - 1)])
        q.wait();
    const int i = ring.received_chunk(r, s);
    for (int k = 0; k < segments; ++k) {
      const std::span<float> place = segment(i, k);
      const size_t at = place.data() - segment(i, 0).data();
      receives[k] = comm.irecv(reducing ? incoming.subspan(at, place.size()) : place, left, tag);
    }
    for (int k = 0; k < segments; ++k) {
      const std::span<float> place = segment(i, k);
      receives[k].wait();
      if (reducing) {
        const size_t at = place.data() - segment(i, 0).data();
        reduce_into(place, incoming.subspan(at, place.size()), op);
        // The owner finishes AVG once, so every rank ends with bit-identical values.
        if (s == n - 2) finish_reduce(place, op, n);
      }
      if (s + 1 < steps) sent[s + 1].push_back(comm.isend(place, right, tag));
    }
  }
  for (int s = n - 1; s < steps; ++s)
    for (Request& q : sent[s])
      q.wait();
}

}  // namespace dsgd
