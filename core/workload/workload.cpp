#include "core/workload/workload.h"

#include <algorithm>

namespace dsgd {

int64_t Workload::grad_bytes() const {
  int64_t bytes = 0;
  for (const WorkloadLayer& layer : layers)
    bytes += layer.grad_bytes;
  return bytes;
}

bool Workload::uses_flops() const {
  return std::any_of(layers.begin(), layers.end(), [](const WorkloadLayer& l) {
    return l.forward_flops > 0 || l.input_grad_flops > 0 || l.weight_grad_flops > 0 ||
           l.update_flops > 0;
  });
}

bool Workload::uses_seconds() const {
  return std::any_of(layers.begin(), layers.end(), [](const WorkloadLayer& l) {
    return l.forward_s > 0 || l.input_grad_s > 0 || l.weight_grad_s > 0 || l.update_s > 0;
  });
}

}  // namespace dsgd
