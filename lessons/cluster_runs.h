// Runs of the real trainer (core/train/trainer.h) on simulated clusters of their own, which
// lessons 7, 9 and 12 start from rank 0 to compare setups: the model time of one step of a
// run, and a run's parameters as one vector. Not the lessons' own ranks: those are
// LessonContext's.
#pragma once

#include <vector>

#include "core/data/dataset.h"
#include "core/train/trainer.h"
#include "sim/cluster.h"

namespace dsgd::lessons {

// Model seconds per training step of `config` on the cluster `options` (its nodes, link and
// faults): the mean of steps 2 and 3 of a 4-step run (step 1 also broadcasts the start
// parameters, the last one ends the run). The network clock runs fast (model time does not
// depend on it).
double step_model_s(const Dataset& data, TrainConfig config, sim::ClusterOptions options);

// Every parameter of `params`, in order, in one vector.
std::vector<float> flat_params(const std::vector<NamedTensor>& params);

}  // namespace dsgd::lessons
