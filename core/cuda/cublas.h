// Cublas: a cuBLAS handle bound to one stream, with the few calls dsgd makes (Sgemm, Sgemv),
// each checked. libcublas is opened with dlopen when the first handle is made, not linked:
// its libcublasLt is half a gigabyte and would add about a second to every `dsgd` start,
// GPU or not. Column-major, as cuBLAS itself; CudaMlp does the row-major translation.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

namespace dsgd::cuda {

class Cublas {
 public:
  // CudaError naming dlopen when libcublas.so.<major> cannot be opened, or cublasCreate.
  explicit Cublas(cudaStream_t stream);
  ~Cublas();
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;

  // cublasSgemm and cublasSgemv with host-side alpha and beta; CudaError on failure.
  void sgemm(cublasOperation_t trans_a, cublasOperation_t trans_b, int m, int n, int k, float alpha,
             const float* a, int lda, const float* b, int ldb, float beta, float* c, int ldc);
  void sgemv(cublasOperation_t trans, int m, int n, float alpha, const float* a, int lda,
             const float* x, int incx, float beta, float* y, int incy);

 private:
  struct Api {  // the entry points, looked up by their exported (_v2) names
    decltype(&cublasCreate_v2) create = nullptr;
    decltype(&cublasDestroy_v2) destroy = nullptr;
    decltype(&cublasSetStream_v2) set_stream = nullptr;
    decltype(&cublasSetMathMode) set_math_mode = nullptr;
    decltype(&cublasSgemm_v2) sgemm = nullptr;
    decltype(&cublasSgemv_v2) sgemv = nullptr;
  };
  void* library_ = nullptr;  // dlopen handle (reference-counted by the loader)
  Api api_;
  cublasHandle_t handle_ = nullptr;
};

}  // namespace dsgd::cuda
