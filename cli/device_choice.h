// --device cpu | cuda | cuda:K for `dsgd train` and `dsgd node`: checks the flag against
// this build and the machine, and makes the factory the trainer calls on each rank
// (core/train/device.h). Plain "cuda" gives each rank its local rank (OMPI_COMM_WORLD_LOCAL_RANK,
// SLURM_LOCALID, or the simulated node's index) modulo the number of GPUs; several ranks
// may share one. The gradients reach the all_reduce through pinned host memory, stay in
// device memory (CUDA-aware MPI, one rank), or are summed by NCCL (--allreduce nccl, or
// --allreduce auto on MPI ranks that each have a GPU of their own; cli/nccl_choice.h).
// Not a scheduler: nothing checks how busy a GPU is.
#pragma once

#include <string>

#include "core/train/trainer.h"

namespace dsgd::cli {

struct TrainFlags;

// Empty for --device cpu. UsageError (exit 2, one line) for a bad value, a dsgd built
// without CUDA, a machine without a GPU, cuda:K past the last GPU, a model the device does
// not train (linear, MSE), or --allreduce nccl in a build without NCCL. The factory itself
// throws UsageError, on every rank, for --allreduce nccl where a rank cannot use it.
DeviceFactory make_device_factory(const TrainFlags& flags, const TrainConfig& config);

// One line for the run summary: "cuda, 4 ranks on 1 GPU (NVIDIA H200)"; "" for the CPU.
std::string describe_device(const TrainFlags& flags, int world);

}  // namespace dsgd::cli
