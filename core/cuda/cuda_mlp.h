// CudaMlp: the CPU MLP's forward (dsgd::Model built from an mlp spec), softmax cross-entropy and
// backward on one CUDA device, with cuBLAS GEMMs and the small kernels of kernels.h, and CudaSgd,
// torch.optim.SGD on the device. Parameters and gradients each live in one flat device buffer laid
// out exactly as Model::values() and Model::grad_buffer() (layers.{i}.weight (out, in),
// layers.{i}.bias (out), then the extra slots), so a step needs one all_reduce and the buffers copy
// one to one. Not a trainer: CudaDevice (cuda_device.h) adds data, staging and the update order.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/cuda/buffers.h"
#include "core/cuda/cublas.h"
#include "core/cuda/kernels.h"
#include "core/nn/sgd.h"

namespace dsgd::cuda {

// Notation: n = rows in this call, D = sizes.front(), O = sizes.back() (classes),
// L = Linear layers, P = parameters, E = extra gradient slots.
class CudaMlp {
 public:
  // Uses the calling thread's current device; every call enqueues on `stream`.
  CudaMlp(std::vector<int64_t> sizes, int64_t extra_grad_slots, cudaStream_t stream);

  const std::vector<int64_t>& sizes() const { return sizes_; }
  int64_t num_layers() const { return static_cast<int64_t>(sizes_.size()) - 1; }
  int64_t num_params() const { return num_params_; }
  int64_t grad_buffer_size() const { return num_params_ + extra_; }
  // Layer l's weight then bias: [offset, offset + count) of values() and grads().
  int64_t layer_offset(int64_t l) const { return weight_offset_[l]; }
  int64_t layer_count(int64_t l) const { return sizes_[l + 1] * (sizes_[l] + 1); }

  float* values() { return values_.data(); }      // (P) device
  float* grad_buffer() { return grads_.data(); }  // (P + E) device
  cudaStream_t stream() const { return stream_; }

  // x (n, D) in device memory. Returns the logits (n, O), device memory owned by the
  // model, valid until the next forward().
  const float* forward(const float* x, int64_t n);

  // After forward(x, n): labels (n) device. Softmax cross-entropy of the logits and the
  // backward pass. OVERWRITES the gradients (P) with grad_scale * dLoss/dParams and writes
  // slot P = loss sum, slot P + 1 = correct count (needs E >= 2). on_layer_done(l), when
  // set, is called on the host as soon as layer l's weight and bias gradients are enqueued
  // (l from L - 1 down to 0; the extra slots are ready with layer L - 1): the caller may
  // record an event on stream() and start copying them while the lower layers compute.
  void backward(const float* x, const int32_t* labels, int64_t n, float grad_scale,
                const std::function<void(int64_t)>& on_layer_done = {});

  // Evaluation: forward and the loss of n rows; acc[0] += loss sum, acc[1] += correct
  // (acc: two doubles in device memory).
  void evaluate(const float* x, const int32_t* labels, int64_t n, double* acc);

  // Zeroes the gradient buffer (P + E): the gradient of a rank with no rows this step.
  void zero_grad();

 private:
  void reserve_rows(int64_t n);
  void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a,
            int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc);
  void loss(const int32_t* labels, int64_t n, float grad_scale, bool want_grad, double* acc);

  std::vector<int64_t> sizes_;
  std::vector<int64_t> weight_offset_, bias_offset_;  // per layer, as Model::params()
  int64_t num_params_ = 0, extra_ = 0;
  cudaStream_t stream_;
  Cublas cublas_;
  DeviceBuffer<float> values_, grads_;
  // Workspace, grown to the largest n seen. acts_[l] is (n, sizes[l + 1]): layer l's output,
  // after ReLU for hidden layers.
  int64_t rows_ = 0;
  std::vector<DeviceBuffer<float>> acts_;
  DeviceBuffer<float> delta_a_, delta_b_;  // (n, max hidden): ping-pong dLoss/d(hidden)
  DeviceBuffer<float> dlogits_;            // (n, O)
  DeviceBuffer<float> ones_;               // (n) of 1: bias gradients as a GEMV
  DeviceBuffer<double> row_loss_;          // (n)
  DeviceBuffer<int32_t> row_correct_;      // (n)
  int64_t forward_rows_ = -1;
};

// torch.optim.SGD on the device, the same update as core/nn/sgd.h (validated the same way).
class CudaSgd {
 public:
  CudaSgd(const SgdOptions& options, int64_t num_params);
  // params (P) and grads (P) device, on `stream`.
  void step(float* params, const float* grads, cudaStream_t stream);

  bool has_momentum_buffer() const { return has_buffer_; }
  float* momentum_buffer() { return buffer_.data(); }  // (P) device; null when momentum 0
  void mark_momentum_buffer() { has_buffer_ = options_.momentum > 0.0f; }

 private:
  SgdOptions options_;
  int64_t num_params_;
  DeviceBuffer<float> buffer_;
  bool has_buffer_ = false;
};

}  // namespace dsgd::cuda
