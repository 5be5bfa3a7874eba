// The launcher-independent half of `dsgd train`: the config built from the flags, the data
// and --init loaded and checked once, and the training of one rank on a Communicator made
// elsewhere. `dsgd node` uses it to train exactly as `dsgd train` does. Not a launcher:
// it starts no node and writes no output file.
#pragma once

#include <string>
#include <vector>

#include "cli/train_command.h"
#include "core/data/dataset.h"
#include "core/io/npz.h"
#include "core/train/trainer.h"

namespace dsgd::cli {

struct TrainInputs {
  TrainConfig config;
  Dataset data;
  std::vector<NamedTensor> init;  // --init; empty: the seeded initialisation
  // config_fingerprint and dataset_fingerprint together: ranks that are separate processes
  // compare it to be sure they train the same thing.
  uint64_t fingerprint = 0;
};

TrainConfig build_train_config(const TrainFlags& flags);
// UsageError at start-up for an output path whose directory is missing or not writable,
// so a long run does not fail at its very end.
void check_output_path(const std::string& path, const char* flag);
// Checks the flags that do not depend on the backend (--device, --lr, --steps/--epochs,
// output paths), loads the data and --init and checks they fit the model.
// UsageError / DataError.
TrainInputs load_train_inputs(const TrainFlags& flags);
// Trains this rank of `comm` (every rank calls it with the same inputs).
TrainResult run_training_on(Communicator& comm, const TrainInputs& inputs,
                            const TrainHooks& hooks = {});

}  // namespace dsgd::cli
