// `dsgd train`: the run description from the flags, the run on the chosen backend, with a
// progress bar, a summary, metrics (JSONL), a trace and saved parameters (.npz) from rank 0.
#pragma once

#include "core/train/train_inputs.h"
#include "sim/run_flags.h"

namespace CLI {
class App;
}

namespace dsgd::cli {

struct TrainFlags {
  sim::RunFlags run;
  bool quiet = false;
};

void add_train_command(CLI::App& app, TrainFlags& flags);
// The train flags of `groups` (sim/run_flags.h) on another command, with --quiet: dsgd
// node trains the same way.
void add_train_options(CLI::App& command, TrainFlags& flags, unsigned groups);
// The trainer's config of `spec` with its device (checked first), the data and --init.
TrainInputs load_inputs(const sim::RunSpec& spec);
int run_train(const TrainFlags& flags);

}  // namespace dsgd::cli
