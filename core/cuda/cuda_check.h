// The one check every CUDA runtime and cuBLAS status goes through (like nccl-tests'
// CUDACHECK), but it throws a typed CudaError naming the call instead of calling exit().
// Kernel launchers in kernels.h return cudaGetLastError(), so launches are checked too.
// Not a logger: the error is the report.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <string>

#include "core/errors.h"

namespace dsgd::cuda {

// A CUDA or cuBLAS call failed: out of device memory, a lost device, a bad launch.
class CudaError : public Error {
 public:
  CudaError(const std::string& what, std::string call) : Error(what), call_(std::move(call)) {}
  const std::string& call() const { return call_; }  // "cudaMalloc", "cublasSgemm", ...

 private:
  std::string call_;
};

// Throw for anything but success. `call` is the call's source text; only its name is kept.
void check(cudaError_t status, const char* call);
void check(cublasStatus_t status, const char* call);

// The name of the device the calling thread uses, for messages ("cuda:0"), or "cuda".
std::string current_device_label();

}  // namespace dsgd::cuda

// DSGD_CUDA_CHECK(cudaMalloc(&p, bytes)); DSGD_CUDA_CHECK(cublasSgemm(...));
#define DSGD_CUDA_CHECK(call) ::dsgd::cuda::check((call), #call)
