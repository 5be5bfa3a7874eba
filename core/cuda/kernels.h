// The small kernels of the MLP on CUDA, behind plain C++ launchers (the only code nvcc
// compiles). GEMMs are not here: cuda_mlp.cpp calls cuBLAS. Every launcher enqueues on
// `stream` and returns cudaGetLastError(), for DSGD_CUDA_CHECK at the call site.
// Notation: n = rows, D = features, O = outputs of a layer, C = classes, P = parameters.
// All matrices are row-major, as the CPU Model's (core/nn/model.h).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace dsgd::cuda {

// x_out (n, D) = x[rows[i], :] and labels_out (n) = labels[rows[i]]; x is (N, D).
cudaError_t launch_gather_rows(const float* x, const int32_t* labels, const int64_t* rows,
                               int64_t n, int64_t d, float* x_out, int32_t* labels_out,
                               cudaStream_t stream);

// y (n, O) += b (O) broadcast over rows, then max(y, 0) when relu.
cudaError_t launch_add_bias(float* y, const float* b, int64_t n, int64_t o, bool relu,
                            cudaStream_t stream);

// dy (count) = y > 0 ? dy : 0, where y is the ReLU's output.
cudaError_t launch_relu_backward(float* dy, const float* y, int64_t count, cudaStream_t stream);

// Softmax cross-entropy per row, as core/nn/loss.h: row_loss (n) = logsumexp - logit[label]
// (in double), row_correct (n) = argmax (first on ties) == label, and unless dlogits is
// null, dlogits (n, C) = grad_scale * (softmax - onehot). One warp per row.
cudaError_t launch_softmax_cross_entropy(const float* logits, const int32_t* labels, int64_t n,
                                         int64_t c, float grad_scale, float* dlogits,
                                         double* row_loss, int32_t* row_correct,
                                         cudaStream_t stream);

// Sums row_loss and row_correct (n) in a fixed order (deterministic). Unless null:
// slots[0] = loss sum and slots[1] = correct count (as floats, the trainer's extra gradient
// slots); acc[0] += loss sum and acc[1] += correct count.
cudaError_t launch_sum_loss(const double* row_loss, const int32_t* row_correct, int64_t n,
                            float* slots, double* acc, cudaStream_t stream);

// torch.optim.SGD on P values, as core/nn/sgd.h, with the same float rounding as the CPU
// (no fused multiply-add): d = g + wd p; b = first ? d : mu b + keep d; p -= lr (nesterov ?
// d + mu b : b). With mu == 0 the buffer is not touched: p -= lr (g + wd p).
struct SgdParams {
  float lr = 0, weight_decay = 0, momentum = 0, keep = 1;  // keep = 1 - dampening
  bool first = true, nesterov = false;
};
cudaError_t launch_sgd_update(float* p, const float* g, float* buf, int64_t count,
                              const SgdParams& sgd, cudaStream_t stream);

// x (count) = value.
cudaError_t launch_fill(float* x, float value, int64_t count, cudaStream_t stream);

}  // namespace dsgd::cuda
