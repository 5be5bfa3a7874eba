// Lesson 6: a solution of the exercise (exercise.cpp), the tutorial's average_gradients.
// `dsgd lesson 6 --check` accepts it.
#include <span>

#include "core/comm/collectives.h"

void average_gradients(dsgd::Communicator& comm, std::span<float> grads) {
  dsgd::all_reduce(comm, grads, dsgd::ReduceOp::SUM);
  const float size = static_cast<float>(comm.size());
  for (float& g : grads)
    g /= size;
}
