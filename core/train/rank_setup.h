// What every training loop (synchronous SGD in trainer.cpp, the parameter server in
// parameter_server.cpp) does on each rank before its first step: where the parameters
// start, and the device that computes. Internal to core/train.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/train/trainer.h"

namespace dsgd {

// Two extra floats ride along with the gradients: the loss sum and the correct count.
inline constexpr int64_t kExtra = 2;

inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Where the run starts: the checkpoint's state, --init, or the seeded initialisation; then,
// as PyTorch's DistributedDataParallel does, every rank takes rank 0's parameters. Returns
// the first step to run.
int64_t start(Communicator& comm, const TrainConfig& config, int64_t steps, Model& model, Sgd& sgd,
              const std::vector<NamedTensor>* init, const TrainState* resume,
              Algorithm broadcast_algorithm);

// Whether the run evaluates after step `step` (from 0) of `steps`, the batch
// `index_in_epoch` of its epoch's `batches_per_epoch`: every --eval-every K steps, else at
// each epoch's end; always after the last step.
bool evaluates_after(const TrainConfig& config, int64_t step, int64_t steps, int64_t index_in_epoch,
                     int64_t batches_per_epoch);

// The rank's device (the CPU unless the config says otherwise), holding the working copy
// of the parameters, the momentum and the data.
std::unique_ptr<ComputeDevice> make_device(Communicator& comm, const TrainConfig& config,
                                           const Dataset& data, Model& model, Sgd& sgd);

}  // namespace dsgd
