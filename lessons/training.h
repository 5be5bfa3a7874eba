// Small training helpers shared by lessons 6-10, written against the Communicator only:
// a data subset, one rank's forward/backward on a slice of a batch, local evaluation, and
// the largest parameter difference from rank 0. The real trainer is core/train/trainer.h;
// lessons that open up its steps use these. B = global batch, n = rows, P = parameters.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/comm/communicator.h"
#include "core/data/dataset.h"
#include "core/nn/model.h"
#include "lessons/lesson.h"

namespace dsgd::lessons {

// The first `train` and `test` samples of `data` (fewer if it has fewer).
Dataset subset(const Dataset& data, int64_t train, int64_t test);

// The synthetic data set lessons 6, 9 and 10 train on: 32 features, 10 classes.
const Dataset& lesson_synthetic(LessonContext& ctx);

// Forward and backward on rows `idx` of the train split: ACCUMULATES into model.grads()
// the gradient of grad_scale * (summed cross-entropy). Returns the summed loss.
double forward_backward(Model& model, const Dataset& data, std::span<const int64_t> idx,
                        float grad_scale);

// Mean loss and accuracy of the model on the whole test split, on this rank alone.
struct LocalEval {
  double loss = 0, accuracy = 0;
};
LocalEval evaluate_local(Model& model, const Dataset& data);

// max_i |values_i - rank 0's values_i| over every rank (a broadcast and an all_reduce MAX);
// the same on every rank.
double max_difference_from_rank0(Communicator& comm, std::span<const float> values);

// "identical", "equal to float rounding (< 1e-5)" or "differ by up to 0.031".
std::string describe_difference(double max_abs, Lang lang);
// max_i |a_i - b_i| of two vectors of the same length.
double max_abs_difference(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace dsgd::lessons
