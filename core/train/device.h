// ComputeDevice: where a rank's forward, backward and SGD update run: the CPU (CpuDevice,
// core/train/cpu_device.h) or a GPU (core/cuda/). The trainer keeps its CPU Model for the
// seeded initialisation, the broadcast and the final parameters; the device holds the
// working copy (for the CPU, that Model itself).
// Not a backend: gradients cross ranks through the Communicator's all_reduce, unless the
// devices sum them among themselves (NCCL: reduce_gradients and gradient_reducer say so).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/comm/collectives.h"
#include "core/data/dataset.h"
#include "core/nn/loss.h"
#include "core/nn/sgd.h"

namespace dsgd {

// Notation: P = parameters, E = extra gradient slots (2: loss sum, correct count),
// n = this rank's rows in a step.
class ComputeDevice {
 public:
  virtual ~ComputeDevice() = default;
  virtual std::string name() const = 0;  // "cuda:0 (NVIDIA H200)"

  // Copies both splits' features and labels to the device once (classification only).
  virtual void load_data(const Dataset& data) = 0;
  // Parameters in Model::values() layout (P), host to device and back.
  virtual void set_params(std::span<const float> values) = 0;
  virtual void get_params(std::span<float> values) = 0;
  // The SGD momentum buffer (P), for checkpoints: get_momentum returns false (and writes
  // nothing) while there is none (momentum 0, or before the first update).
  virtual void set_momentum(std::span<const float> values) = 0;
  virtual bool get_momentum(std::span<float> values) = 0;

  // Forward, softmax cross-entropy and backward on the train rows `rows` (n = rows.size(),
  // may be 0), gradients scaled by grad_scale; slot P holds the loss sum, slot P + 1 the
  // correct count. Returns the whole buffer (P + E) for the all_reduce: host memory, or
  // device memory where the caller said its all_reduce reads device memory (CUDA-aware
  // MPI, one rank). Valid until the next call.
  virtual std::span<float> gradients(std::span<const int64_t> rows, float grad_scale) = 0;
  // gradients(), calling layers_done(l, buffer) each time the gradients of every layer >= l
  // (and the extra slots) are final, from the last layer down, so that the trainer's buckets
  // start their all_reduce while backward goes on (DDP's overlap); `buffer` is what this
  // returns. Called on the thread that called this. A device that computes in one piece (the
  // default) does so, then calls layers_done(0, buffer).
  using LayersDone = std::function<void(int64_t lowest_layer, std::span<float> buffer)>;
  virtual std::span<float> gradients_by_layer(std::span<const int64_t> rows, float grad_scale,
                                              const LayersDone& layers_done);
  // The all_reduce (SUM, in place, over every rank, waited for) of what gradients()
  // returned. By default the Communicator's, with `algorithm`; a device whose GPUs sum among
  // themselves (NCCL) does it there, inside the same CollectiveScope, so that traces and
  // lessons see one all_reduce either way.
  virtual void reduce_gradients(Communicator& comm, std::span<float> grads, Algorithm algorithm);
  // Who sums the gradients when the devices do it themselves ("NCCL 2.28.9"); "" when the
  // Communicator does (reduce_gradients' default), as for the CPU.
  virtual std::string gradient_reducer() const { return ""; }
  // After the all_reduce of gradients(): the SGD update on the device. Writes the reduced
  // extra slots (E) to `extra`.
  virtual void update(std::span<float> extra) = 0;
  // Loss sum and correct count over test rows [begin, end).
  virtual LossSum evaluate_test(int64_t begin, int64_t end) = 0;
};

// Makes the device of one rank: its Communicator (rank, world size, timeout; every rank
// calls the factory at the same point, so it may run collectives to agree on a set-up),
// the MLP's sizes {D, H..., O} (Model::mlp_sizes(); a CNN is refused before), the SGD options and
// E. Called once per rank by train(), on that rank's thread.
using DeviceFactory = std::function<std::unique_ptr<ComputeDevice>(
    Communicator& comm, const std::vector<int64_t>& sizes, const SgdOptions& sgd,
    int64_t extra_slots)>;

// Mean loss and accuracy on the test split: each rank evaluates its slice on its device, one
// all_reduce with `algorithm` combines the sums.
struct Evaluation {
  double loss = 0;
  std::optional<double> accuracy;
};
Evaluation evaluate(Communicator& comm, ComputeDevice& device, const Dataset& data,
                    Algorithm algorithm = Algorithm::automatic);

}  // namespace dsgd
