// Notation: n = rows in this call, L = Linear layers, layer l maps sizes[l] -> sizes[l + 1],
// P = parameters, E = extra gradient slots. Matrices are row-major, as in core/nn/model.cpp.
#include "core/cuda/cuda_mlp.h"

#include <algorithm>
#include <climits>
#include <stdexcept>

#include <fmt/format.h>

#include "core/errors.h"

namespace dsgd::cuda {
namespace {

int to_int(int64_t v, const char* what) {
  if (v < 0 || v > INT_MAX)
    throw std::invalid_argument(fmt::format("cuBLAS: {} = {} is outside 0..INT_MAX", what, v));
  return static_cast<int>(v);
}

}  // namespace

CudaMlp::CudaMlp(std::vector<int64_t> sizes, int64_t extra_grad_slots, cudaStream_t stream)
    : sizes_(std::move(sizes)), extra_(extra_grad_slots), stream_(stream), cublas_(stream) {
  if (sizes_.size() < 2)
    throw UsageError(fmt::format("CudaMlp: needs input and output sizes, got {}", sizes_.size()));
  if (extra_ < 2)
    throw std::invalid_argument("CudaMlp: needs 2 extra gradient slots (loss, correct count)");
  int64_t offset = 0;
  for (int64_t l = 0; l < num_layers(); ++l) {
    weight_offset_.push_back(offset);
    offset += sizes_[l + 1] * sizes_[l];
    bias_offset_.push_back(offset);
    offset += sizes_[l + 1];
  }
  num_params_ = offset;
  values_.reserve(static_cast<size_t>(num_params_));
  grads_.reserve(static_cast<size_t>(num_params_ + extra_));
  acts_.resize(static_cast<size_t>(num_layers()));
}

void CudaMlp::reserve_rows(int64_t n) {
  if (n <= rows_) return;
  const size_t rows = static_cast<size_t>(n);
  int64_t max_hidden = 1;
  for (int64_t l = 0; l < num_layers(); ++l)
    acts_[l].reserve(rows * sizes_[l + 1]);
  for (int64_t l = 1; l < num_layers(); ++l)
    max_hidden = std::max(max_hidden, sizes_[l]);
  delta_a_.reserve(rows * max_hidden);
  delta_b_.reserve(rows * max_hidden);
  dlogits_.reserve(rows * sizes_.back());
  ones_.reserve(rows);
  DSGD_CUDA_CHECK(launch_fill(ones_.data(), 1.0f, n, stream_));
  row_loss_.reserve(rows);
  row_correct_.reserve(rows);
  rows_ = n;
}

// Row-major C (m, n) = op(A) op(B) (+ 0 C) through column-major cuBLAS: a row-major matrix
// is its transpose in column-major, so cuBLAS computes C^T (n, m) = op(B)^T op(A)^T, with
// B first and the dimensions swapped. Leading dimensions are the row strides.
void CudaMlp::gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a,
                   int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) {
  cublas_.sgemm(trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                to_int(n, "n"), to_int(m, "m"), to_int(k, "k"), 1.0f, b, to_int(ldb, "ldb"), a,
                to_int(lda, "lda"), 0.0f, c, to_int(ldc, "ldc"));
}

const float* CudaMlp::forward(const float* x, int64_t n) {
  if (n <= 0) throw std::invalid_argument(fmt::format("CudaMlp::forward: n = {} <= 0", n));
  reserve_rows(n);
  const float* in = x;  // (n, sizes[l])
  for (int64_t l = 0; l < num_layers(); ++l) {
    const int64_t in_dim = sizes_[l], out_dim = sizes_[l + 1];
    float* out = acts_[l].data();  // (n, out_dim)
    gemm(false, true, n, out_dim, in_dim, in, in_dim, values_.data() + weight_offset_[l], in_dim,
         out, out_dim);  // x W^T, W (out, in)
    DSGD_CUDA_CHECK(launch_add_bias(out, values_.data() + bias_offset_[l], n, out_dim,
                                    l + 1 < num_layers(), stream_));
    in = out;
  }
  forward_rows_ = n;
  return acts_.back().data();
}

void CudaMlp::loss(const int32_t* labels, int64_t n, float grad_scale, bool want_grad,
                   double* acc) {
  DSGD_CUDA_CHECK(launch_softmax_cross_entropy(acts_.back().data(), labels, n, sizes_.back(),
                                               grad_scale, want_grad ? dlogits_.data() : nullptr,
                                               row_loss_.data(), row_correct_.data(), stream_));
  DSGD_CUDA_CHECK(launch_sum_loss(row_loss_.data(), row_correct_.data(), n,
                                  acc ? nullptr : grads_.data() + num_params_, acc, stream_));
}

void CudaMlp::backward(const float* x, const int32_t* labels, int64_t n, float grad_scale,
                       const std::function<void(int64_t)>& on_layer_done) {
  if (n != forward_rows_)
    throw std::logic_error(fmt::format(
        "CudaMlp::backward: called with n = {} after forward with n = {}", n, forward_rows_));
  // Slots P, P + 1 first: they travel with the top layer's gradients.
  loss(labels, n, grad_scale, true, nullptr);
  const float* g = dlogits_.data();  // (n, out_dim) = dLoss/d(layer l's pre-activation)
  for (int64_t l = num_layers() - 1; l >= 0; --l) {
    const int64_t in_dim = sizes_[l], out_dim = sizes_[l + 1];
    const float* a_in = l == 0 ? x : acts_[l - 1].data();  // (n, in_dim)
    // db (out_dim) = column sums of g: in column-major g is (out_dim, n), times ones (n).
    cublas_.sgemv(CUBLAS_OP_N, to_int(out_dim, "out"), to_int(n, "n"), 1.0f, g,
                  to_int(out_dim, "ldg"), ones_.data(), 1, 0.0f, grads_.data() + bias_offset_[l],
                  1);
    // dW (out_dim, in_dim) = g^T a_in
    gemm(true, false, out_dim, in_dim, n, g, out_dim, a_in, in_dim,
         grads_.data() + weight_offset_[l], in_dim);
    if (on_layer_done) on_layer_done(l);
    if (l == 0) break;  // nobody needs dLoss/dx
    // da (n, in_dim) = g W, then through the ReLU that produced a_in (a_in > 0 exactly
    // where its input was > 0).
    float* da = (l % 2 == 0) ? delta_a_.data() : delta_b_.data();
    gemm(false, false, n, in_dim, out_dim, g, out_dim, values_.data() + weight_offset_[l], in_dim,
         da, in_dim);
    DSGD_CUDA_CHECK(launch_relu_backward(da, a_in, n * in_dim, stream_));
    g = da;
  }
}

void CudaMlp::evaluate(const float* x, const int32_t* labels, int64_t n, double* acc) {
  if (n <= 0) return;
  forward(x, n);
  loss(labels, n, 1.0f, false, acc);
}

void CudaMlp::zero_grad() {
  DSGD_CUDA_CHECK(cudaMemsetAsync(
      grads_.data(), 0, static_cast<size_t>(num_params_ + extra_) * sizeof(float), stream_));
}

// --- CudaSgd ------------------------------------------------------------------------------

CudaSgd::CudaSgd(const SgdOptions& options, int64_t num_params)
    : options_(options), num_params_(num_params) {
  Sgd validate(options, 0);  // the CPU optimizer's checks and messages
  if (options_.momentum > 0.0f) buffer_.reserve(static_cast<size_t>(num_params_));
}

void CudaSgd::step(float* params, const float* grads, cudaStream_t stream) {
  const SgdParams p{.lr = options_.lr,
                    .weight_decay = options_.weight_decay,
                    .momentum = options_.momentum,
                    .keep = 1.0f - options_.dampening,
                    .first = !has_buffer_,
                    .nesterov = options_.nesterov};
  DSGD_CUDA_CHECK(launch_sgd_update(params, grads, buffer_.data(), num_params_, p, stream));
  has_buffer_ = options_.momentum > 0.0f;
}

}  // namespace dsgd::cuda
