#include "core/comm/halving_doubling_schedule.h"

namespace dsgd {

HalvingDoubling HalvingDoubling::of(int world) {
  HalvingDoubling h{.world = world};
  while (h.pow2 * 2 <= world) {
    h.pow2 *= 2;
    ++h.levels;
  }
  h.extra = world - h.pow2;
  return h;
}

int HalvingDoubling::core_rank(int rank) const {
  if (rank >= 2 * extra) return rank - extra;
  return rank % 2 == 1 ? rank / 2 : -1;
}

int HalvingDoubling::held_before_halving(int v, int j) const {
  // Halving step j exchanges at distance d = P / 2^(j+1); before it v has merged with the
  // core ranks that differ from it only in the bits above d.
  const int d = pow2 >> (j + 1);
  int held = 0;
  for (int u = 0; u < pow2; ++u)
    if (((u ^ v) & (2 * d - 1)) == 0) held += u < extra ? 2 : 1;
  return held;
}

int HalvingDoubling::held_before_doubling(int v, int j) const {
  int held = 0;
  for (int u = 0; u < pow2; ++u)
    if ((u ^ v) < (1 << j)) held += u < extra ? 2 : 1;
  return held;
}

}  // namespace dsgd
