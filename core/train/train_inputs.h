// What a training run needs before any rank starts: its config, the data and the initial
// parameters, loaded and checked once, so that a bad file is one line before a node runs;
// and the training of one rank on a Communicator made elsewhere, the same for dsgd train,
// dsgd node, MPI ranks and the GUI. Not a launcher: it starts no node, writes no file.
#pragma once

#include <string>
#include <vector>

#include "core/data/dataset.h"
#include "core/io/npz.h"
#include "core/train/trainer.h"

namespace dsgd {

struct TrainInputs {
  TrainConfig config;
  Dataset data;
  std::vector<NamedTensor> init;  // --init; empty: the seeded initialisation
  // config_fingerprint and dataset_fingerprint together: ranks that are separate processes
  // compare it to be sure they train the same thing.
  uint64_t fingerprint = 0;
};

// The data of `data_spec` (a regression task for the linear model on data with targets)
// and the parameters of `init_path` ("" for the seeded ones), checked against `config`'s
// model (UsageError / DataError naming the flag and the file).
TrainInputs load_train_inputs(const TrainConfig& config, const std::string& data_spec,
                              const std::string& init_path);
// Trains this rank of `comm` (every rank calls it with the same inputs).
TrainResult run_training_on(Communicator& comm, const TrainInputs& inputs,
                            const TrainHooks& hooks = {}, const TrainState* resume = nullptr);

}  // namespace dsgd
