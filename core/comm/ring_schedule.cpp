#include "core/comm/ring_schedule.h"

#include <algorithm>

namespace dsgd {

RingSchedule RingSchedule::of(size_t count, int world) {
  return {world, ring_segments(Chunks{count, std::max(world, 1)}.max_size())};
}

int RingSchedule::received_chunk(int rank, int s) const {
  return ring_mod(rank - s - 1, world);
}

int RingSchedule::sent_chunk(int rank, int s) const {
  return received_chunk(ring_mod(rank + 1, world), s);
}

int RingSchedule::sent_contributions(int s) const {
  return reducing(s) ? s + 1 : world;
}

int RingSchedule::contributions(int rank, int c, int done) const {
  if (world <= 1) return 1;
  const int j = ring_mod(rank - c, world);  // chunk c is j steps to the left of rank's own
  const int scattered = std::min(done, world - 1);
  const int gathered = std::max(0, done - (world - 1));
  if (j < gathered) return world;              // overwritten by a complete chunk
  if (j >= 1 && j <= scattered) return j + 1;  // ranks r, r-1, ..., r-j
  return 1;
}

}  // namespace dsgd
