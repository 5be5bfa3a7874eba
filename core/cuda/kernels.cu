// Notation: n = rows, D = features, O = layer outputs, C = classes, P = parameters.
// Element-wise kernels use grid-stride loops over int64 indices, so any size launches with
// a bounded grid.
#include <cmath>

#include "core/cuda/kernels.h"

namespace dsgd::cuda {
namespace {

constexpr int kThreads = 256;
constexpr unsigned kFullMask = 0xffffffffu;

unsigned grid_for(int64_t count) {
  const int64_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > (1 << 20) ? (1 << 20) : blocks));
}

__global__ void gather_rows_kernel(const float* __restrict__ x, const int32_t* __restrict__ labels,
                                   const int64_t* __restrict__ rows, int64_t n, int64_t d,
                                   float* __restrict__ x_out, int32_t* __restrict__ labels_out) {
  // One block per output row (grid-strided), its threads across the D features.
  for (int64_t i = blockIdx.x; i < n; i += gridDim.x) {
    const int64_t src = rows[i];
    const float* in = x + src * d;
    float* out = x_out + i * d;
    for (int64_t j = threadIdx.x; j < d; j += blockDim.x)
      out[j] = in[j];
    if (threadIdx.x == 0) labels_out[i] = labels[src];
  }
}

__global__ void add_bias_kernel(float* __restrict__ y, const float* __restrict__ b, int64_t n,
                                int64_t o, bool relu) {
  const int64_t count = n * o;
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < count;
       e += int64_t{gridDim.x} * blockDim.x) {
    const float v = y[e] + b[e % o];
    y[e] = relu ? fmaxf(v, 0.0f) : v;
  }
}

__global__ void relu_backward_kernel(float* __restrict__ dy, const float* __restrict__ y,
                                     int64_t count) {
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < count;
       e += int64_t{gridDim.x} * blockDim.x)
    if (!(y[e] > 0.0f)) dy[e] = 0.0f;
}

// One warp per row. The argmax is the first maximum, as torch.argmax and the CPU loss.
__global__ void softmax_cross_entropy_kernel(const float* __restrict__ logits,
                                             const int32_t* __restrict__ labels, int64_t n,
                                             int64_t c, float grad_scale,
                                             float* __restrict__ dlogits,
                                             double* __restrict__ row_loss,
                                             int32_t* __restrict__ row_correct) {
  const int lane = threadIdx.x & 31;
  const int64_t warps = int64_t{gridDim.x} * (blockDim.x / 32);
  for (int64_t row = blockIdx.x * int64_t{blockDim.x / 32} + threadIdx.x / 32; row < n;
       row += warps) {
    const float* x = logits + row * c;  // (C)
    float best = 0.0f;
    int64_t best_j = c;  // c: this lane saw no element
    for (int64_t j = lane; j < c; j += 32) {
      const float v = x[j];
      if (best_j == c || v > best) {
        best = v;
        best_j = j;
      }
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
      const float other = __shfl_xor_sync(kFullMask, best, offset);
      const int64_t other_j = __shfl_xor_sync(kFullMask, best_j, offset);
      if (other_j != c && (best_j == c || other > best || (other == best && other_j < best_j))) {
        best = other;
        best_j = other_j;
      }
    }
    float denom = 0.0f;
    for (int64_t j = lane; j < c; j += 32)
      denom += expf(x[j] - best);
    for (int offset = 16; offset > 0; offset >>= 1)
      denom += __shfl_xor_sync(kFullMask, denom, offset);
    const int32_t label = labels[row];
    const bool valid = label >= 0 && label < c;  // checked on upload; never read outside x
    if (lane == 0) {
      row_loss[row] = valid ? log(static_cast<double>(denom)) -
                                  (static_cast<double>(x[label]) - static_cast<double>(best))
                            : nan("");
      row_correct[row] = best_j == label;
    }
    if (dlogits) {
      float* d = dlogits + row * c;  // (C)
      const float scale = grad_scale / denom;
      for (int64_t j = lane; j < c; j += 32) {
        float v = expf(x[j] - best) * scale;
        if (j == label) v -= grad_scale;
        d[j] = v;
      }
    }
  }
}

// One block; a fixed reduction tree, so the sum is the same on every run.
__global__ void sum_loss_kernel(const double* __restrict__ row_loss,
                                const int32_t* __restrict__ row_correct, int64_t n,
                                float* __restrict__ slots, double* __restrict__ acc) {
  __shared__ double loss[kThreads];
  __shared__ long long correct[kThreads];
  double l = 0;
  long long k = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    l += row_loss[i];
    k += row_correct[i];
  }
  loss[threadIdx.x] = l;
  correct[threadIdx.x] = k;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half >>= 1) {
    if (threadIdx.x < half) {
      loss[threadIdx.x] += loss[threadIdx.x + half];
      correct[threadIdx.x] += correct[threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    if (slots) {
      slots[0] = static_cast<float>(loss[0]);
      slots[1] = static_cast<float>(correct[0]);
    }
    if (acc) {
      acc[0] += loss[0];
      acc[1] += static_cast<double>(correct[0]);
    }
  }
}

// __fmul_rn / __fadd_rn are never contracted into an FMA: the CPU (x86-64 without -mfma)
// rounds each operation, and so does this.
__global__ void sgd_kernel(float* __restrict__ p, const float* __restrict__ g,
                           float* __restrict__ buf, int64_t count, SgdParams o) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    const float d = __fadd_rn(g[i], __fmul_rn(o.weight_decay, p[i]));
    float step = d;
    if (o.momentum != 0.0f) {
      const float b = o.first ? d : __fadd_rn(__fmul_rn(o.momentum, buf[i]), __fmul_rn(o.keep, d));
      buf[i] = b;
      step = o.nesterov ? __fadd_rn(d, __fmul_rn(o.momentum, b)) : b;
    }
    p[i] = __fsub_rn(p[i], __fmul_rn(o.lr, step));
  }
}

__global__ void fill_kernel(float* x, float value, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x)
    x[i] = value;
}

}  // namespace

cudaError_t launch_gather_rows(const float* x, const int32_t* labels, const int64_t* rows,
                               int64_t n, int64_t d, float* x_out, int32_t* labels_out,
                               cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  const unsigned blocks = static_cast<unsigned>(n < (1 << 20) ? n : (1 << 20));
  gather_rows_kernel<<<blocks, kThreads, 0, stream>>>(x, labels, rows, n, d, x_out, labels_out);
  return cudaGetLastError();
}

cudaError_t launch_add_bias(float* y, const float* b, int64_t n, int64_t o, bool relu,
                            cudaStream_t stream) {
  if (n * o <= 0) return cudaSuccess;
  add_bias_kernel<<<grid_for(n * o), kThreads, 0, stream>>>(y, b, n, o, relu);
  return cudaGetLastError();
}

cudaError_t launch_relu_backward(float* dy, const float* y, int64_t count, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  relu_backward_kernel<<<grid_for(count), kThreads, 0, stream>>>(dy, y, count);
  return cudaGetLastError();
}

cudaError_t launch_softmax_cross_entropy(const float* logits, const int32_t* labels, int64_t n,
                                         int64_t c, float grad_scale, float* dlogits,
                                         double* row_loss, int32_t* row_correct,
                                         cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  constexpr int64_t kRowsPerBlock = kThreads / 32;
  const int64_t blocks = (n + kRowsPerBlock - 1) / kRowsPerBlock;
  softmax_cross_entropy_kernel<<<static_cast<unsigned>(blocks < (1 << 20) ? blocks : (1 << 20)),
                                 kThreads, 0, stream>>>(logits, labels, n, c, grad_scale, dlogits,
                                                        row_loss, row_correct);
  return cudaGetLastError();
}

cudaError_t launch_sum_loss(const double* row_loss, const int32_t* row_correct, int64_t n,
                            float* slots, double* acc, cudaStream_t stream) {
  sum_loss_kernel<<<1, kThreads, 0, stream>>>(row_loss, row_correct, n, slots, acc);
  return cudaGetLastError();
}

cudaError_t launch_sgd_update(float* p, const float* g, float* buf, int64_t count,
                              const SgdParams& sgd, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  sgd_kernel<<<grid_for(count), kThreads, 0, stream>>>(p, g, buf, count, sgd);
  return cudaGetLastError();
}

cudaError_t launch_fill(float* x, float value, int64_t count, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  fill_kernel<<<grid_for(count), kThreads, 0, stream>>>(x, value, count);
  return cudaGetLastError();
}

}  // namespace dsgd::cuda
