#include "core/cuda/cublas.h"

#include <dlfcn.h>

#include <string>

#include <fmt/format.h>

#include "core/cuda/cuda_check.h"

namespace dsgd::cuda {
namespace {

const std::string kCublasSoname = fmt::format("libcublas.so.{}", CUBLAS_VER_MAJOR);

template <class F>
void lookup(void* library, const char* symbol, F& f) {
  f = reinterpret_cast<F>(dlsym(library, symbol));
  if (!f)
    throw CudaError(fmt::format("{}: dlsym({}) failed in {}: {}", current_device_label(), symbol,
                                kCublasSoname, dlerror()),
                    "dlsym");
}

}  // namespace

Cublas::Cublas(cudaStream_t stream) {
  // The loader's search path first (LD_LIBRARY_PATH, ld.so.cache), then the toolkit that
  // dsgd was built with.
  library_ = dlopen(kCublasSoname.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library_)
    library_ =
        dlopen((std::string(DSGD_CUBLAS_DIR) + "/" + kCublasSoname).c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library_)
    throw CudaError(fmt::format("{}: dlopen({}) failed: {}; install the CUDA Toolkit's cuBLAS or "
                                "add its directory to LD_LIBRARY_PATH",
                                current_device_label(), kCublasSoname, dlerror()),
                    "dlopen");
  try {
    lookup(library_, "cublasCreate_v2", api_.create);
    lookup(library_, "cublasDestroy_v2", api_.destroy);
    lookup(library_, "cublasSetStream_v2", api_.set_stream);
    lookup(library_, "cublasSetMathMode", api_.set_math_mode);
    lookup(library_, "cublasSgemm_v2", api_.sgemm);
    lookup(library_, "cublasSgemv_v2", api_.sgemv);
    check(api_.create(&handle_), "cublasCreate");
    check(api_.set_stream(handle_, stream), "cublasSetStream");
    // CUBLAS_DEFAULT_MATH keeps FP32 maths (no TF32 tensor-core shortcut, as PyTorch's
    // default), so results compare with the CPU to float rounding.
    check(api_.set_math_mode(handle_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  } catch (...) {
    if (handle_) api_.destroy(handle_);
    dlclose(library_);
    throw;
  }
}

Cublas::~Cublas() {
  if (handle_) api_.destroy(handle_);
  dlclose(library_);
}

void Cublas::sgemm(cublasOperation_t trans_a, cublasOperation_t trans_b, int m, int n, int k,
                   float alpha, const float* a, int lda, const float* b, int ldb, float beta,
                   float* c, int ldc) {
  check(api_.sgemm(handle_, trans_a, trans_b, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc),
        "cublasSgemm");
}

void Cublas::sgemv(cublasOperation_t trans, int m, int n, float alpha, const float* a, int lda,
                   const float* x, int incx, float beta, float* y, int incy) {
  check(api_.sgemv(handle_, trans, m, n, &alpha, a, lda, x, incx, &beta, y, incy), "cublasSgemv");
}

}  // namespace dsgd::cuda
