// Exact inputs and expected reductions for the conformance suite (see exact_values.h).
#include "tests/conformance/exact_values.h"

#include <algorithm>

namespace dsgd::conformance {

namespace {
constexpr float kSmall[] = {-3, -2, -1, 1, 2, 3};
constexpr size_t kLabelPeriod = size_t{1} << 20;
}  // namespace

float small_value(int r, size_t i) {
  // Mixed so that neighbouring ranks and elements differ; a function of (r, i mod P) only.
  const size_t p = i % kPeriod;
  const size_t mix = (static_cast<size_t>(r) * 7 + 3) * (p * p + 5 * p + 1) + r;
  return kSmall[mix % std::size(kSmall)];
}

float label(int r, size_t i) {
  return static_cast<float>(static_cast<size_t>(r) * kLabelPeriod + i % kLabelPeriod);
}

std::vector<float> small_values(int r, size_t count) {
  std::array<float, kPeriod> period;  // one period, copied over: a large buffer fills fast
  for (size_t p = 0; p < kPeriod; ++p)
    period[p] = small_value(r, p);
  std::vector<float> v(count);
  for (size_t i = 0; i < count; i += kPeriod)
    std::copy_n(period.begin(), std::min(kPeriod, count - i), v.begin() + i);
  return v;
}

std::vector<float> labels(int r, size_t count) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i)
    v[i] = label(r, i);
  return v;
}

ExpectedReduction::ExpectedReduction(ReduceOp op, int world) {
  for (size_t p = 0; p < kPeriod; ++p) {
    float acc = small_value(0, p);
    for (int r = 1; r < world; ++r)
      acc = reduce_pair(acc, small_value(r, p), op);
    table_[p] = op == ReduceOp::AVG ? acc / static_cast<float>(world) : acc;
  }
}

}  // namespace dsgd::conformance
