// The CUDA devices of a run (--device cuda | cuda:K): which GPU each rank takes, whether the
// gradients reach the all_reduce through pinned host memory, stay in device memory (a
// CUDA-aware MPI, one rank) or are summed by NCCL, and the NCCL agreement itself: every
// rank's GPU and libnccl gathered over the Communicator, one decision everywhere, the id
// made by rank 0 and broadcast (nccl_choice.h). Plain "cuda" gives each rank its local rank
// (DeviceRequest::local_rank) modulo the number of GPUs; several ranks may share one.
// Not a scheduler: nothing checks how busy a GPU is.
#pragma once

#include <functional>
#include <string>

#include "core/cuda/nccl_choice.h"
#include "core/train/trainer.h"

namespace dsgd::cuda {

struct DeviceRequest {
  std::string device = "cuda";              // "cuda" or "cuda:K"
  NcclRequest nccl = NcclRequest::off;      // nccl_request(--allreduce, MPI?)
  bool native_all_reduce = false;           // --allreduce native: the backend's own
  std::function<int(int rank)> local_rank;  // the rank's index on its host; empty: rank
  std::function<bool()> cuda_aware;         // the backend reads device memory; empty: no
  bool ranks_on_many_hosts = false;         // for describe_device: MPI ranks
};

// UsageError (one line) for a bad --device, a machine without a GPU, cuda:K past the last
// GPU, a model the device does not train (linear, MSE), or --allreduce nccl in a build
// without NCCL. The factory itself throws UsageError, on every rank, for --allreduce nccl
// where a rank cannot use it.
DeviceFactory make_device_factory(const DeviceRequest& request, const TrainConfig& config);

// One line for the run summary: "cuda: 4 ranks on 1 GPU (NVIDIA H200)".
std::string describe_device(const DeviceRequest& request, int world);

}  // namespace dsgd::cuda
