#include "core/workload/workload_step.h"

#include <algorithm>

#include "core/train/buckets.h"

namespace dsgd {

namespace {

using LayerTimes = StepCompute;

LayerTimes layer_times(const WorkloadLayer& l, int64_t batch, const RankSpeed& speed) {
  const double per_flop = 1 / speed.flops_per_s;
  const double samples = double(batch);
  return {
      .forward_s = (l.forward_flops * samples * per_flop + l.forward_s) * speed.slowdown,
      .backward_s = ((l.input_grad_flops + l.weight_grad_flops) * samples * per_flop +
                     l.input_grad_s + l.weight_grad_s) *
                    speed.slowdown,
      .update_s = (l.update_flops * per_flop + l.update_s) * speed.slowdown,
  };
}

}  // namespace

std::vector<WorkloadBucket> workload_buckets(const Workload& workload, int64_t first_bytes,
                                             int64_t cap_bytes) {
  std::vector<WorkloadBucket> buckets;
  const int top = static_cast<int>(workload.layers.size()) - 1;
  WorkloadBucket current{.lowest = top, .highest = top};
  for (int i = top; i >= 0; --i) {
    current.lowest = i;
    current.bytes += workload.layers[i].grad_bytes;
    const bool capped = cap_bytes > 0;  // 0: one bucket, reduced once backward is over
    if (capped && current.bytes > 0 &&
        current.bytes >= bucket_limit(buckets.size(), first_bytes, cap_bytes)) {
      buckets.push_back(current);
      current = {.lowest = i - 1, .highest = i - 1};
    }
  }
  if (current.bytes > 0) buckets.push_back(current);
  return buckets;
}

StepCompute step_compute(const WorkloadPlan& plan, const RankSpeed& speed) {
  StepCompute sum;
  for (const WorkloadLayer& l : plan.workload.layers) {
    const LayerTimes t = layer_times(l, plan.batch, speed);
    sum.forward_s += t.forward_s;
    sum.backward_s += t.backward_s;
    sum.update_s += t.update_s;
  }
  return sum;
}

StepTimes run_workload_step(Communicator& comm, const WorkloadPlan& plan, const RankSpeed& speed,
                            std::span<float> gradients) {
  const std::vector<WorkloadLayer>& layers = plan.workload.layers;
  std::vector<LayerTimes> times;
  for (const WorkloadLayer& l : layers)
    times.push_back(layer_times(l, plan.batch, speed));
  const double start = comm.model_s();
  double compute = 0;
  for (const LayerTimes& t : times)
    compute += t.forward_s;
  // Backward from the last layer: where each layer's gradients are done.
  std::vector<double> done(layers.size());
  double clock = start + compute;
  for (size_t i = layers.size(); i-- > 0;) {
    clock += times[i].backward_s;
    done[i] = clock;
  }
  const double backward_end = clock;
  size_t offset = 0;
  for (const WorkloadBucket& b : plan.buckets) {
    comm.advance_model_to(done[b.lowest]);
    all_reduce(comm, gradients.subspan(offset, b.floats()), ReduceOp::AVG, plan.all_reduce);
    offset += b.floats();
  }
  // backward() returns once every bucket is reduced; then optimizer.step().
  double update = 0;
  for (const LayerTimes& t : times)
    update += t.update_s;
  comm.advance_model_to(std::max(backward_end, comm.model_s()) + update);
  return {.compute_s = backward_end - start + update, .total_s = comm.model_s() - start};
}

}  // namespace dsgd
