// A thin row-major wrapper over CBLAS sgemm (OpenBLAS) and its thread count.
// Only this file's .cpp includes <cblas.h>; nothing here allocates or keeps state.
// Not a general BLAS binding: dsgd needs only sgemm.
#pragma once

#include <cstdint>

namespace dsgd {

// C (m, n) = alpha * op(A) (m, k) * op(B) (k, n) + beta * C, all row-major.
// op(A) = A^T when trans_a (A stored (k, m)), else A (stored (m, k)); likewise for B.
// lda, ldb, ldc are row strides in floats. k == 0 gives C = beta * C (beta == 0 writes zeros).
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

// OpenBLAS's own thread pool size. dsgd runs it single-threaded: each simulated node is
// already a thread, and nested pools would oversubscribe the cores.
void set_blas_threads(int n);
int blas_threads();

}  // namespace dsgd
