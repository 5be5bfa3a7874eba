// Losses as torch.nn.functional defines them, written per sample so that ranks holding
// slices of a global batch of B rows can sum them: pass grad_scale = 1/B and the summed
// gradients equal those of the mean over the whole batch. Not a module: plain functions.
#pragma once

#include <cstdint>

namespace dsgd {

struct LossSum {
  double loss = 0;      // sum of per-sample losses over the n rows
  int64_t correct = 0;  // rows whose argmax hits the label (first max on ties, as torch)
};

// Notation: n = rows, C = classes.
// logits (n, C), labels (n) in 0..C-1 (DataError otherwise). loss_i = logsumexp(logits_i) -
// logits_i[label_i], computed stably (row max subtracted). Writes dlogits (n, C) =
// grad_scale * (softmax - onehot) unless dlogits is null (evaluation).
LossSum softmax_cross_entropy(const float* logits, const int32_t* labels, int64_t n, int64_t c,
                              float grad_scale, float* dlogits);

// Notation: n = rows, K = outputs.
// pred (n, K), target (n, K). loss_i = sum_j (p - t)^2 / K, so the mean over B rows is
// F.mse_loss's 'mean'. Writes dpred (n, K) = grad_scale * 2 (p - t) / K unless dpred is null.
// correct counts rows with argmax(pred) == argmax(target) when K > 1, else stays 0.
LossSum mse(const float* pred, const float* target, int64_t n, int64_t k, float grad_scale,
            float* dpred);

}  // namespace dsgd
