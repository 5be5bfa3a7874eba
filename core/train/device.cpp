#include "core/train/device.h"

#include <algorithm>

#include "core/comm/collectives.h"
#include "core/data/sampler.h"

namespace dsgd {

std::span<float> ComputeDevice::gradients_by_layer(std::span<const int64_t> rows, float grad_scale,
                                                   const LayersDone& layers_done) {
  const std::span<float> grads = gradients(rows, grad_scale);
  if (layers_done) layers_done(0, grads);
  return grads;
}

void ComputeDevice::reduce_gradients(Communicator& comm, std::span<float> grads,
                                     Algorithm algorithm) {
  all_reduce(comm, grads, ReduceOp::SUM, {.algorithm = algorithm});
}

Evaluation evaluate(Communicator& comm, ComputeDevice& device, const Dataset& data,
                    Algorithm algorithm) {
  auto [begin, end] = DataParallelSampler::slice(data.test.size(), comm.rank(), comm.size());
  const LossSum s = device.evaluate_test(begin, end);
  // Two floats, summed over ranks.
  std::vector<float> sums{static_cast<float>(s.loss), static_cast<float>(s.correct)};
  all_reduce(comm, sums, ReduceOp::SUM, {.algorithm = algorithm});
  Evaluation e;
  const double n = static_cast<double>(std::max<int64_t>(data.test.size(), 1));
  e.loss = sums[0] / n;
  if (data.task == Task::classification) e.accuracy = sums[1] / n;
  return e;
}

}  // namespace dsgd
