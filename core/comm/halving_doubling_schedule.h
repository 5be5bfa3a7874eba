// Halving-doubling's ranks and steps, in one place: allreduce_halving_doubling.cpp runs
// them and the event fold (core/event_fold.h) labels the messages with them.
// R = world, P = the largest power of two <= R, E = R - P, L = log2 P. Ranks 0..2E-1 fold
// in pairs (the even one sends to the odd one above it and sits out); the P core ranks,
// numbered v, exchange with v ^ d in L halving steps (reduce-scatter) and L doubling steps
// (all-gather); then each odd rank below 2E unfolds the result to its even partner.
// Recursive doubling (allreduce_recursive_doubling.cpp) folds and pairs the same ranks, in
// L steps of whole buffers at distance 1, 2, ..., P/2.
// Not the data movement: which rank is which, and in what order the messages go.
#pragma once

namespace dsgd {

struct HalvingDoubling {
  int world = 1;
  int pow2 = 1;    // P
  int extra = 0;   // E
  int levels = 0;  // L = log2 P

  static HalvingDoubling of(int world);

  bool folds() const { return extra > 0; }
  // v of a rank that takes part in the exchanges; -1 for an even rank below 2E.
  int core_rank(int rank) const;
  int real_rank(int v) const { return v < extra ? 2 * v + 1 : v + extra; }
  // Steps of one all_reduce: the fold, L halving, L doubling, the unfold (no fold: 2L).
  int steps() const { return 2 * levels + (folds() ? 2 : 0); }
  // The step of the k-th exchange (0 <= k < 2L): after the fold when there is one.
  int exchange_step(int k) const { return k + (folds() ? 1 : 0); }
  // How many ranks' values core rank v holds before halving step j (0 <= j < L): those of
  // the core ranks it has exchanged with so far, two for each core rank that folded one in.
  int held_before_halving(int v, int j) const;
  // The same for recursive doubling's step j (distance 2^j): the core ranks u with
  // u ^ v < 2^j, folds counted twice.
  int held_before_doubling(int v, int j) const;
};

}  // namespace dsgd
