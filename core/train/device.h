// ComputeDevice: where a rank's forward, backward and SGD update run when it is not the
// CPU (core/cuda/ implements it for CUDA). The trainer keeps its CPU Mlp for the seeded
// initialisation, the broadcast and the final parameters; the device holds the working copy.
// Not a backend: gradients cross ranks through the Communicator's all_reduce, unless the
// devices sum them among themselves (NCCL: all_reduce_name() says so).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/comm/communicator.h"
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
  // Parameters in Mlp::values() layout (P), host to device and back.
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
  // Who sums the gradients when the devices do it themselves ("NCCL 2.28.9"); "" when the
  // Communicator's all_reduce is to do it, as it does for the CPU.
  virtual std::string all_reduce_name() const { return ""; }
  // Where all_reduce_name() is not empty: the devices' all_reduce (SUM, in place) of what
  // gradients() returned, over every rank, waited for.
  virtual void all_reduce(std::span<float> grads) {
    throw std::logic_error("ComputeDevice::all_reduce: this device has no all_reduce of its own");
  }
  // After the all_reduce of gradients(): the SGD update on the device. Writes the reduced
  // extra slots (E) to `extra`.
  virtual void update(std::span<float> extra) = 0;
  // Loss sum and correct count over test rows [begin, end).
  virtual LossSum evaluate_test(int64_t begin, int64_t end) = 0;
};

// Makes the device of one rank: its Communicator (rank, world size, timeout; every rank
// calls the factory at the same point, so it may run collectives to agree on a set-up),
// the Mlp's sizes {D, H..., O}, the SGD options and E. Called once per rank by train(),
// on that rank's thread.
using DeviceFactory = std::function<std::unique_ptr<ComputeDevice>(
    Communicator& comm, const std::vector<int64_t>& sizes, const SgdOptions& sgd,
    int64_t extra_slots)>;

struct Evaluation;
// evaluate() on a device: each rank its slice of the test split, one all_reduce of the sums.
Evaluation evaluate_on_device(Communicator& comm, ComputeDevice& device, const Dataset& data);

}  // namespace dsgd
