// NCCL for the gradients' all_reduce when every rank has a GPU of its own, as DDP's "nccl"
// backend. libnccl.so.2 is opened with dlopen on first use, like cuBLAS (cublas.h): it is
// 218 MB and most runs never touch it. The communicator is non-blocking (config.blocking =
// 0), so each wait for the other ranks (joining, each all_reduce, leaving) polls against a
// deadline, and against the backend's word that the run has failed, instead of hanging on
// a rank that died: the communicator is then aborted (ncclCommAbort, NCCL's own call, does
// not take a deadline) and CommError or TimeoutError thrown.
// Not a Communicator: NCCL only sums the gradients; everything else stays on the backend.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace dsgd::cuda {

using NcclId = std::array<uint8_t, sizeof(ncclUniqueId)>;

// "2.28.9" when libnccl opens; "" otherwise, with the reason in *why_not.
std::string nccl_version(std::string* why_not = nullptr);

// A fresh id naming one communicator (ncclGetUniqueId), made on one rank and broadcast to
// the others. CudaError when libnccl cannot be opened or the call fails.
NcclId nccl_unique_id();

class NcclComm {
 public:
  // Why the run has failed, or "" (Communicator::failure): polled while waiting.
  using FailureProbe = std::function<std::string()>;

  // Joins communicator `id` as `rank` of `world` on the calling thread's current device.
  // TimeoutError when the other ranks have not joined within `timeout`; CommError when
  // `failure` reports the run failed meanwhile, or NCCL reports a lost peer; CudaError when
  // NCCL fails otherwise (two ranks on one GPU, no network it can use, ...).
  NcclComm(const NcclId& id, int world, int rank, std::chrono::milliseconds timeout,
           FailureProbe failure = {});
  ~NcclComm();  // leaves (ncclCommFinalize, within the timeout), or aborts
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  // Sums `count` floats in place over all ranks (ncclAllReduce on `stream`, after the work
  // already queued there) and waits for the result. After aborting the communicator:
  // TimeoutError when a rank does not take part within the timeout, CommError when the run
  // failed meanwhile or a peer was lost, CudaError for anything else.
  void all_reduce_sum(float* data, size_t count, cudaStream_t stream);

 private:
  // Polls ncclCommGetAsyncError until the state leaves ncclInProgress and, when `stream`
  // is given, until the stream has drained; aborts and throws on an error, past `deadline`,
  // or (when `probe`) once failure_ reports one.
  void wait(const char* call, std::chrono::steady_clock::time_point deadline,
            std::optional<cudaStream_t> stream = std::nullopt, bool probe = true);
  void abort();

  ncclComm_t comm_ = nullptr;
  int rank_ = 0;
  bool joined_ = false;  // init completed: a system error from now on means a lost peer
  std::chrono::milliseconds timeout_;
  FailureProbe failure_;
};

}  // namespace dsgd::cuda
