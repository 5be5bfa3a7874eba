// A training workload for timing, as ASTRA-sim and SimAI describe a model: per layer, the
// compute of its forward and backward passes and the gradient bytes that data-parallel
// training all-reduces. No values: a workload says how long things take and how much moves,
// which is what a step's time depends on. Built-in tables of real models
// (model_tables.h) and ASTRA-sim 1.0's text input (astra_workload.h) give one;
// run_workload_step (workload_step.h) times it on a Communicator.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dsgd {

// One layer. Compute is flops per sample (a table, scaled by the batch) plus seconds per
// step (a time-based input such as ASTRA-sim's, which does not depend on the batch).
struct WorkloadLayer {
  std::string name;
  double forward_flops = 0, input_grad_flops = 0, weight_grad_flops = 0;  // per sample
  double forward_s = 0, input_grad_s = 0, weight_grad_s = 0;              // per step
  int64_t grad_bytes = 0;   // gradients all-reduced once backward has done this layer
  double update_s = 0;      // the optimizer's update of this layer, after its all-reduce
  double update_flops = 0;  // ... as flops per step (SGD: 2 per parameter)
};

struct Workload {
  std::string name;                   // "resnet50", or the input file's name
  std::string source;                 // where its numbers come from, for the output and the docs
  std::vector<WorkloadLayer> layers;  // in forward order
  // What the table's samples are ("224x224 images", "sequences of 512 tokens").
  std::string sample;

  int64_t grad_bytes() const;                          // all layers
  int64_t params() const { return grad_bytes() / 4; }  // float32 gradients
  bool uses_flops() const;    // some compute is in flops (depends on the host's rate)
  bool uses_seconds() const;  // some compute is in seconds
};

}  // namespace dsgd
