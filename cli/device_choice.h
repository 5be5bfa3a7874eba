// --device cpu | cuda | cuda:K for `dsgd train` and `dsgd node`: the device factory the
// trainer calls on each rank (core/train/device.h), from the run description and what this
// build has: the CPU (none), or the CUDA devices (core/cuda/device_factory.h) told how the
// backend numbers ranks on a host (OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID, or the
// simulated node's index) and whether its MPI reads device memory.
#pragma once

#include <string>

#include "core/train/trainer.h"
#include "sim/run_spec.h"

namespace dsgd::cli {

// Empty for --device cpu. UsageError (exit 2, one line) for a dsgd built without CUDA, and
// the CUDA devices' own (cuda::make_device_factory).
DeviceFactory make_device_factory(const sim::RunSpec& spec, const TrainConfig& config);

// One line for the run summary: "cuda, 4 ranks on 1 GPU (NVIDIA H200)"; "" for the CPU.
std::string describe_device(const sim::RunSpec& spec, int world);

}  // namespace dsgd::cli
