// Lesson 6 exercise: the PyTorch tutorial's average_gradients, in dsgd.
//
//   cp lessons/06-why-synchronise/exercise.cpp my_average.cpp   # then fill in the TODO
//   dsgd lesson 6 --check my_average.cpp
//
// The tutorial ("Writing Distributed Applications with PyTorch") averages the gradients of
// every parameter after backward:
//
//   def average_gradients(model):
//       size = float(dist.get_world_size())
//       for param in model.parameters():
//           dist.all_reduce(param.grad.data, op=dist.ReduceOp.SUM)
//           param.grad.data /= size
//
// Here the gradients of every parameter are one flat span, as in dsgd's models. After
// average_gradients every rank's `grads` must hold the element-wise mean over the ranks.
// dsgd's collectives are allowed: dsgd::all_reduce(comm, grads, dsgd::ReduceOp::SUM)
// (core/comm/collectives.h). The checker runs it on 1 to 8 ranks with 0 to 2^18 floats.
#include <span>

#include "core/comm/collectives.h"

void average_gradients(dsgd::Communicator& comm, std::span<float> grads) {
  (void)comm;
  (void)grads;
  // TODO: sum over the ranks, then divide by comm.size().
}
