// The summary a training run prints at its end (dsgd train, dsgd node): what ran, the
// final loss and accuracy, time, communication, device, network, and the files written.
// Not a log: rank 0 prints it once.
#pragma once

#include <string>
#include <vector>

#include "core/data/dataset.h"
#include "core/train/trainer.h"
#include "sim/run_spec.h"

namespace dsgd::cli {

struct RunReport {
  std::string what;  // "dsgd train on 4 simulated nodes", "dsgd node: rank 0 of 3 processes"
  const sim::RunSpec& spec;
  const Dataset& data;
  const TrainResult& result;
  double total_s = 0;       // wall time since the command started
  std::string resumed;      // "ckpt/ckpt-0000000010.npz (step 10)", "" when not resumed
  std::string checkpoints;  // the newest checkpoint written and how many are kept, or ""
  std::string trace;        // where the trace went and how to open it, or ""
  std::string monitor;      // the observer the events streamed to and what it got, or ""
  std::vector<std::string> membership;  // an elastic run's changes (sim/elastic.h)
};

void print_summary(const RunReport& report);

}  // namespace dsgd::cli
