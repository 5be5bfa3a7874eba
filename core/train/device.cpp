#include "core/train/device.h"

#include <algorithm>

#include "core/comm/collectives.h"
#include "core/data/sampler.h"
#include "core/train/trainer.h"

namespace dsgd {

Evaluation evaluate_on_device(Communicator& comm, ComputeDevice& device, const Dataset& data) {
  auto [begin, end] = DataParallelSampler::slice(data.test.size(), comm.rank(), comm.size());
  const LossSum s = device.evaluate_test(begin, end);
  // The same reduction as evaluate(): two floats, summed over ranks.
  std::vector<float> sums{static_cast<float>(s.loss), static_cast<float>(s.correct)};
  all_reduce(comm, sums, ReduceOp::SUM);
  Evaluation e;
  const double n = static_cast<double>(std::max<int64_t>(data.test.size(), 1));
  e.loss = sums[0] / n;
  if (data.task == Task::classification) e.accuracy = sums[1] / n;
  return e;
}

}  // namespace dsgd
