// One data-parallel training step of a workload (workload.h), timed on a Communicator's model
// clock (SimGrid's virtual time, or simulated nodes' model time) as PyTorch's DDP runs it:
// forward; then backward, layer by layer from the last, with the gradient buckets
// all-reduced in order, each as soon as backward has produced it and the one before has
// ended, while backward goes on below; then, once backward has returned (every bucket
// reduced), the optimizer's update of every layer. Compute is modelled, not run: the
// rank's clock moves on by each layer's time. One thread does both: a bucket's ready time
// is known in advance from the compute model, so the rank waits until it (advance_model_to)
// and then all-reduces, which is what overlapping compute would give.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/comm/collectives.h"
#include "core/comm/communicator.h"
#include "core/workload/workload.h"

namespace dsgd {

// DDP's buckets over a workload's layers, in the order backward fills them: layers
// [lowest, highest], closed once they hold first_bytes (the first) or cap_bytes (the
// others), as core/train/buckets.h; cap_bytes 0: one bucket of every gradient, reduced once
// backward is over (as dsgd train --bucket-mb 0); caps of a byte: a bucket per layer (as
// ASTRA-sim reduces them). Layers without gradients join the bucket being filled; no
// bucket is empty. Buckets hold whole layers: a layer's gradients are ready together.
struct WorkloadBucket {
  int lowest = 0, highest = 0;  // layers, forward order
  int64_t bytes = 0;
  size_t floats() const { return size_t((bytes + 3) / 4); }  // what its all-reduce moves
};
std::vector<WorkloadBucket> workload_buckets(const Workload& workload, int64_t first_bytes,
                                             int64_t cap_bytes);

// How fast a rank computes: flops per second, and a slow-down factor (a straggler's).
struct RankSpeed {
  double flops_per_s = 20e9;
  double slowdown = 1;
};

struct WorkloadPlan {
  Workload workload;
  int64_t batch = 32;  // samples per rank (the tables' flops are per sample)
  std::vector<WorkloadBucket> buckets;
  CollectiveOptions all_reduce;
};

// A step's compute on a rank of this speed, each part back to back (seconds).
struct StepCompute {
  double forward_s = 0, backward_s = 0, update_s = 0;
};
StepCompute step_compute(const WorkloadPlan& plan, const RankSpeed& speed);

// What one step took on this rank, in model seconds.
struct StepTimes {
  double compute_s = 0;  // forward, backward and updates, back to back
  double total_s = 0;    // the step, start to end
  double exposed_s() const { return total_s - compute_s; }  // communication not hidden
};

// Runs one step on `comm` (every rank of the world together). `gradients` holds every
// bucket's floats, in bucket order (phantom payloads: a shared buffer).
StepTimes run_workload_step(Communicator& comm, const WorkloadPlan& plan, const RankSpeed& speed,
                            std::span<float> gradients);

}  // namespace dsgd
