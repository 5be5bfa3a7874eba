// The ring all-reduce's schedule, in one place: allreduce_ring.cpp runs it and the event
// fold (core/event_fold.h) labels messages and chunk bookkeeping with it, so the two cannot
// disagree. R = world, r = rank, s = step in [0, 2(R-1)): steps s < R-1 reduce-scatter (add
// the incoming chunk to ours), the others all-gather (overwrite ours with a complete one).
// In each step rank r sends one chunk to r+1 and receives one from r-1, each as `segments`
// messages (chunks.h: ring_segments), so a rank's m-th message of one all_reduce (sent or
// received) belongs to step m / segments. Not the data movement: which chunk, when, how full.
#pragma once

#include <cstddef>

#include "core/comm/chunks.h"

namespace dsgd {

// a mod n in 0..n-1 for any a: the rank `a` places round a ring of n.
inline int ring_mod(int a, int n) {
  return ((a % n) + n) % n;
}

struct RingSchedule {
  int world = 1;     // R >= 1
  int segments = 1;  // messages per chunk per step, >= 1

  // The schedule of an all_reduce of `count` floats: chunks of Chunks{count, R}, each cut
  // into ring_segments(largest chunk) messages.
  static RingSchedule of(size_t count, int world);

  int steps() const { return 2 * (world - 1); }
  int messages() const { return steps() * segments; }  // each rank sends (and receives)
  bool reducing(int s) const { return s < world - 1; }
  int step_of(int m) const { return m / segments; }
  int segment_of(int m) const { return m % segments; }

  // The chunk rank r receives from r-1 in step s: chunk r-s-1 (mod R) in both halves;
  // reduce-scatter adds it to its own, all-gather overwrites its own with the complete one.
  int received_chunk(int rank, int s) const;
  // The chunk rank r sends to r+1 in step s: chunk r in step 0, afterwards what it received
  // in step s-1 (which is what r+1 receives in step s): chunk r-s (mod R).
  int sent_chunk(int rank, int s) const;
  // How many ranks' values the chunk sent in step s holds: s+1 while reducing, then R.
  int sent_contributions(int s) const;
  // How many ranks' values chunk c holds on rank r once r has completed its first `done`
  // steps: 1 (its own) up to R. A partial chunk's contributors are the consecutive ranks
  // r, r-1, ..., r-n+1 (mod R).
  int contributions(int rank, int c, int done) const;
};

}  // namespace dsgd
