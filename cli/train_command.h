// `dsgd train`: flags, their checks, and the run on the chosen backend, with a progress
// bar, a summary, metrics (JSONL) and saved parameters (.npz) from rank 0.
#pragma once

#include <cstdint>
#include <string>

#include "cli/checkpoint_flags.h"
#include "cli/sim_flags.h"

namespace CLI {
class App;
}

namespace dsgd::cli {

struct TrainFlags {
  std::string backend = "sim";
  std::string model = "mlp:64";
  std::string data = "synthetic";
  int64_t batch = 256;
  double lr = 0.1;
  double momentum = 0.9;
  double weight_decay = 0.0;
  bool nesterov = false;
  int64_t steps = 0;
  int64_t epochs = 0;
  uint64_t seed = 0;
  bool no_shuffle = false;
  int64_t eval_every = 0;
  std::string init, save, metrics;
  std::string allreduce = "auto";
  std::string device = "cpu";
  SimFlags sim;
  CheckpointFlags checkpoint;  // dsgd train only, not dsgd node
  std::string trace;
  bool quiet = false;
};

void add_train_command(CLI::App& app, TrainFlags& flags);
// The train flags on another command (dsgd node trains the same way).
void add_train_options(CLI::App& command, TrainFlags& flags);
int run_train(const TrainFlags& flags);

}  // namespace dsgd::cli
