#include "core/cuda/cuda_check.h"

#include <fmt/format.h>

namespace dsgd::cuda {
namespace {

// "cudaMalloc(&p, bytes)" -> "cudaMalloc"; "launch_gather_rows(...)" -> "launch_gather_rows".
std::string call_name(const char* call) {
  const std::string text(call);
  const size_t paren = text.find('(');
  return paren == std::string::npos ? text : text.substr(0, paren);
}

const char* hint(cudaError_t status) {
  switch (status) {
    case cudaErrorMemoryAllocation:
      return "; use a smaller --batch or model, or fewer ranks per GPU";
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
      return "; check nvidia-smi, or use --device cpu";
    default:
      return "";
  }
}

}  // namespace

std::string current_device_label() {
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess) return "cuda";
  return fmt::format("cuda:{}", device);
}

void check(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  const std::string name = call_name(call);
  throw CudaError(fmt::format("{}: {} failed: {} ({}){}", current_device_label(), name,
                              cudaGetErrorString(status), cudaGetErrorName(status), hint(status)),
                  name);
}

namespace {

// cuBLAS is opened with dlopen (cublas.h), so its own cublasGetStatusName is not linked.
const char* status_name(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "CUBLAS_STATUS_NOT_INITIALIZED: the library was not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "CUBLAS_STATUS_ALLOC_FAILED: resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "CUBLAS_STATUS_INVALID_VALUE: an unsupported value or parameter was passed";
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return "CUBLAS_STATUS_ARCH_MISMATCH: the device does not support the operation";
    case CUBLAS_STATUS_MAPPING_ERROR:
      return "CUBLAS_STATUS_MAPPING_ERROR: access to GPU memory space failed";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "CUBLAS_STATUS_EXECUTION_FAILED: the GPU program failed to execute";
    case CUBLAS_STATUS_INTERNAL_ERROR:
      return "CUBLAS_STATUS_INTERNAL_ERROR: an internal operation failed";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "CUBLAS_STATUS_NOT_SUPPORTED: the functionality is not supported";
    default:
      return "unknown cuBLAS status";
  }
}

}  // namespace

void check(cublasStatus_t status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  const std::string name = call_name(call);
  const char* extra = status == CUBLAS_STATUS_ALLOC_FAILED
                          ? "; use a smaller --batch or model, or fewer ranks per GPU"
                          : "";
  throw CudaError(fmt::format("{}: {} failed: {} ({}){}", current_device_label(), name,
                              status_name(status), static_cast<int>(status), extra),
                  name);
}

}  // namespace dsgd::cuda
