// RAII owners for CUDA resources: device memory, pinned host memory, streams and events
// (the cuBLAS handle is in cublas.h). Each frees what it owns in its destructor (errors there are
// ignored: a destructor must not throw, and a failed free leaves nothing to do). Move-only. Not an
// allocator: buffers grow on demand and never shrink, so a warm step allocates nothing.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <utility>

#include "core/cuda/cuda_check.h"

namespace dsgd::cuda {

enum class Memory { device, pinned };

// count elements of T in device memory (cudaMalloc) or pinned host memory (cudaMallocHost).
template <class T, Memory kWhere>
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(size_t count) { reserve(count); }
  ~Buffer() { release(); }
  Buffer(Buffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }

  // Grows to at least count elements; the old contents are NOT kept.
  void reserve(size_t count) {
    if (count <= count_) return;
    release();
    void* p = nullptr;
    if constexpr (kWhere == Memory::device)
      DSGD_CUDA_CHECK(cudaMalloc(&p, count * sizeof(T)));
    else
      DSGD_CUDA_CHECK(cudaMallocHost(&p, count * sizeof(T)));
    ptr_ = static_cast<T*>(p);
    count_ = count;
  }
  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  size_t size() const { return count_; }

 private:
  void release() {
    if (!ptr_) return;
    if constexpr (kWhere == Memory::device)
      cudaFree(ptr_);
    else
      cudaFreeHost(ptr_);
    ptr_ = nullptr;
    count_ = 0;
  }
  T* ptr_ = nullptr;
  size_t count_ = 0;
};

template <class T>
using DeviceBuffer = Buffer<T, Memory::device>;
template <class T>
using PinnedBuffer = Buffer<T, Memory::pinned>;

// A non-blocking stream: it does not synchronise with the legacy default stream.
class Stream {
 public:
  Stream() { DSGD_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }
  void synchronize() const { DSGD_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

// An event for ordering work between streams (no timing).
class Event {
 public:
  Event() { DSGD_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming)); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace dsgd::cuda
