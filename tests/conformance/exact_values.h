// Inputs for collective checks whose results are exact in float whatever the order of the
// reduction (Gloo's fixtures, nccl-tests' "verifiable" data): small non-zero integers, and
// labels that say which rank and element a value came from. Not random: a value depends only
// on (rank, element), so every rank computes every expectation itself.
// R = world size (at most kMaxRanks), P = kPeriod (small values repeat every P elements).
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "core/comm/reduce_op.h"

namespace dsgd::conformance {

inline constexpr size_t kPeriod = 61;  // prime, so rows of the tested sizes start out of phase
inline constexpr int kMaxRanks = 15;   // labels stay below 2^24, exact in float
// Fills buffers that a collective must not touch, or must overwrite: no label or small
// value is ever -0.5.
inline constexpr float kUntouched = -0.5f;

// Rank r's i-th contribution to a reduction: one of -3..3 but 0, so a product over
// 15 ranks (3^15) and a sum stay exact in float.
float small_value(int r, size_t i);
// Rank r's i-th value where data only moves: r * 2^20 + (i mod 2^20).
float label(int r, size_t i);
std::vector<float> small_values(int r, size_t count);  // small_value(r, 0 .. count-1)
std::vector<float> labels(int r, size_t count);        // label(r, 0 .. count-1)

// The reduction of small_value(0..R-1, i) by `op`, AVG rounded once as the collectives
// round it (the exact sum divided by R).
class ExpectedReduction {
 public:
  ExpectedReduction(ReduceOp op, int world);
  float operator()(size_t i) const { return table_[i % kPeriod]; }

 private:
  std::array<float, kPeriod> table_{};
};

}  // namespace dsgd::conformance
