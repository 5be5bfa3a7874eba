#include "core/nn/blas.h"

#include <cblas.h>

#include <climits>
#include <stdexcept>
#include <string>

namespace dsgd {

namespace {

// CBLAS takes 32-bit ints; dsgd's dimensions are int64_t.
blasint to_blasint(int64_t v, const char* what) {
  if (v < 0 || v > INT_MAX)
    throw std::invalid_argument(std::string("gemm: ") + what + " = " + std::to_string(v) +
                                " is outside 0..INT_MAX");
  return static_cast<blasint>(v);
}

}  // namespace

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    // An empty product; BLAS would reject lda = 0, and C must still be scaled.
    for (int64_t i = 0; i < m; ++i) {
      float* row = c + i * ldc;
      for (int64_t j = 0; j < n; ++j)
        row[j] = beta == 0.0f ? 0.0f : beta * row[j];
    }
    return;
  }
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, to_blasint(m, "m"), to_blasint(n, "n"),
              to_blasint(k, "k"), alpha, a, to_blasint(lda, "lda"), b, to_blasint(ldb, "ldb"), beta,
              c, to_blasint(ldc, "ldc"));
}

void set_blas_threads(int n) {
  if (n < 1)
    throw std::invalid_argument("set_blas_threads: n must be >= 1, got " + std::to_string(n));
  openblas_set_num_threads(n);
}

int blas_threads() {
  return openblas_get_num_threads();
}

}  // namespace dsgd
