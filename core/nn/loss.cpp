// Notation: n = rows, C = classes (K = regression outputs).
#include "core/nn/loss.h"

#include <cmath>

#include <fmt/format.h>

#include "core/errors.h"

namespace dsgd {

namespace {

// First index of the maximum, as torch.argmax.
int64_t argmax(const float* row, int64_t c) {
  int64_t best = 0;
  for (int64_t j = 1; j < c; ++j)
    if (row[j] > row[best]) best = j;
  return best;
}

}  // namespace

LossSum softmax_cross_entropy(const float* logits, const int32_t* labels, int64_t n, int64_t c,
                              float grad_scale, float* dlogits) {
  LossSum sum;
  for (int64_t i = 0; i < n; ++i) {
    const float* row = logits + i * c;  // (C)
    const int32_t label = labels[i];
    if (label < 0 || label >= c)
      throw DataError(fmt::format(
          "label {} (row {} of this batch) is outside 0..{}: the model has {} outputs; check that "
          "--data and --model agree",
          label, i, c - 1, c));
    const int64_t top = argmax(row, c);
    const float max = row[top];
    float denom = 0.0f;
    for (int64_t j = 0; j < c; ++j)
      denom += std::exp(row[j] - max);
    sum.loss += std::log(static_cast<double>(denom)) - (static_cast<double>(row[label]) - max);
    sum.correct += top == label;
    if (dlogits) {
      float* d = dlogits + i * c;  // (C)
      const float scale = grad_scale / denom;
      for (int64_t j = 0; j < c; ++j)
        d[j] = std::exp(row[j] - max) * scale;
      d[label] -= grad_scale;
    }
  }
  return sum;
}

LossSum mse(const float* pred, const float* target, int64_t n, int64_t k, float grad_scale,
            float* dpred) {
  LossSum sum;
  const float dscale = 2.0f * grad_scale / static_cast<float>(k);
  for (int64_t i = 0; i < n; ++i) {
    const float* p = pred + i * k;    // (K)
    const float* t = target + i * k;  // (K)
    double sq = 0;
    for (int64_t j = 0; j < k; ++j) {
      const float diff = p[j] - t[j];
      sq += static_cast<double>(diff) * diff;
      if (dpred) dpred[i * k + j] = dscale * diff;
    }
    sum.loss += sq / static_cast<double>(k);
    if (k > 1) sum.correct += argmax(p, k) == argmax(t, k);
  }
  return sum;
}

}  // namespace dsgd
