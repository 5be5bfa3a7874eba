// `dsgd train`'s checkpoint flags: --checkpoint-every K --checkpoint-dir D
// --keep-checkpoints N and --resume [PATH], their checks, and the checkpoint to resume
// from, found and verified before any node starts. Not the format: core/train/checkpoint.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/train/checkpoint.h"

namespace CLI {
class App;
}

namespace dsgd::cli {

struct CheckpointFlags {
  int64_t every = 0;  // --checkpoint-every K; 0: no checkpoints
  std::string dir;    // --checkpoint-dir D
  int keep = 3;       // --keep-checkpoints N
  bool resume = false;
  std::string resume_path;  // --resume PATH; empty: the newest intact one in dir
};

void add_checkpoint_flags(CLI::App& command, CheckpointFlags& flags);

struct CheckpointPlan {
  std::optional<Checkpoint> resume;  // the state to continue from
  std::string resume_path;
  CheckpointConfig run_config;  // this run's; world is `world` as given to the planner
};

// Checks the flags (UsageError), finds and reads the checkpoint to resume from, printing
// one warning line on stderr for each newer damaged one it skips (DataError when a given
// file, or every file in dir, is damaged), checks it came from this configuration
// (UsageError) and fits the model (DataError), and creates dir when checkpoints are to be
// written. `world` 0: not known yet (MPI), check it later with check_world().
CheckpointPlan plan_checkpoints(const CheckpointFlags& flags, const TrainConfig& config,
                                const Dataset& data, int world);

// The world-size half of the check, once the world is known (UsageError).
void check_world(const CheckpointPlan& plan, int world);

}  // namespace dsgd::cli
