// The checkpoint a run resumes from (--resume [PATH]), found and verified before any node
// starts, and the directory it writes them into: the run description's checkpoints
// (run_spec.h, CheckpointSpec) made ready for `dsgd train`. The flags are run_flags.h; the
// format is core/train/checkpoint.h. Not the writing of checkpoints (the trainer's hooks).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/train/checkpoint.h"
#include "sim/run_spec.h"

namespace dsgd::sim {

struct CheckpointPlan {
  std::optional<Checkpoint> resume;  // the state to continue from
  std::string resume_path;
  CheckpointConfig run_config;  // this run's; world is `world` as given to the planner
};

// Finds and reads the checkpoint to resume from, printing
// one warning line on stderr for each newer damaged one it skips (DataError when a given
// file, or every file in dir, is damaged), checks it came from this configuration
// (UsageError) and fits the model (DataError), and creates dir when checkpoints are to be
// written. `world` 0: not known yet (MPI), check it later with check_world().
CheckpointPlan plan_checkpoints(const CheckpointSpec& checkpoints, const TrainConfig& config,
                                const Dataset& data, int world);

// The world-size half of the check, once the world is known (UsageError).
void check_world(const CheckpointPlan& plan, int world);

// An elastic restart's state (elastic.h): the newest intact checkpoint of `dir`, from this
// run's configuration with any world size; none while dir holds no checkpoint.
std::optional<TrainState> newest_state(const CheckpointPlan& plan, const std::string& dir);

}  // namespace dsgd::sim
