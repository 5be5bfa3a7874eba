// What rank 0 of `dsgd train` and `dsgd node` does beside training: the progress bar, the
// metrics, the checkpoints, and, in an elastic run, each round's reports and the state the
// next round goes on from. Both commands train their ranks through these, so a run of
// processes writes what a run of threads writes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cli/progress.h"
#include "core/io/metrics.h"
#include "core/train/train_inputs.h"
#include "sim/checkpoint_plan.h"
#include "sim/elastic.h"

namespace dsgd::cli {

// What rank 0 reports to the command line as the run goes, and writes at its end.
struct RankZeroOutputs {
  std::unique_ptr<MetricsWriter> metrics;
  Progress progress;
  std::string last_checkpoint;  // written by rank 0's thread
};

// Rank 0's hooks: metrics and progress after each step, a checkpoint every --checkpoint-every
// steps (every rank holds the same state: rank 0 writes it). None on the other ranks.
TrainHooks rank_zero_hooks(Communicator& comm, const sim::RunSpec& spec,
                           const sim::CheckpointPlan& plan, RankZeroOutputs& out);

// What rank 0 trained, once it has (a crash fault on rank 0 leaves nothing to report).
struct RankZeroResult {
  TrainResult result;
  bool finished = false;
  std::vector<StepMetrics> steps;  // an elastic run: every step rank 0 reported, all rounds
};

// Trains one rank of an elastic round: rank 0's outputs, the round's reports of each step
// and, in-process, the commits the survivors go on from. When the round shares its state
// (processes), every rank first takes rank 0's.
void train_round(Communicator& comm, const sim::ElasticRound& round, const TrainInputs& inputs,
                 const sim::RunSpec& spec, const sim::CheckpointPlan& plan, RankZeroOutputs& out,
                 RankZeroResult& rank0);

}  // namespace dsgd::cli
