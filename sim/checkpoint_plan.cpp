#include "sim/checkpoint_plan.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/io/atomic_file.h"
#include "core/nn/model.h"

namespace dsgd::sim {

namespace {

// Creates dir (and its parents) when missing; UsageError when it cannot be written.
void prepare_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    throw UsageError(fmt::format("--checkpoint-dir {}: cannot create it ({}); check the path", dir,
                                 ec ? ec.message() : "not a directory"));
  if (access(dir.c_str(), W_OK) != 0)
    throw UsageError(fmt::format("--checkpoint-dir {}: is not writable; choose another", dir));
}

}  // namespace

namespace {

// The checkpoint to continue from (--resume [PATH]): read, verified, and checked against
// this run's configuration, model and length before any node starts.
void plan_resume(const CheckpointSpec& f, const TrainConfig& config, const Dataset& data, int world,
                 CheckpointPlan& plan) {
  if (!f.resume_path.empty()) {
    plan.resume = read_checkpoint(f.resume_path);
    plan.resume_path = f.resume_path;
  } else {
    FoundCheckpoint found = find_latest_checkpoint(f.dir);
    for (const std::string& why : found.skipped)
      fmt::print(stderr, "dsgd: warning: {}; skipped it, resuming from {}\n", why, found.path);
    plan.resume = std::move(found.checkpoint);
    plan.resume_path = found.path;
  }
  CheckpointConfig expected = plan.run_config;
  if (world == 0) expected.world = plan.resume->config.world;  // checked by check_world()
  check_same_config(plan.resume->config, expected, plan.resume_path);
  // Names and shapes, with the file named, before any node starts.
  Model probe = Model::from_spec(config.model, data.features, model_outputs(config.model, data));
  probe.load_state(plan.resume->state.params, "checkpoint " + plan.resume_path);
  const size_t momentum = plan.resume->state.momentum.size();
  if (momentum != (config.sgd.momentum > 0 ? static_cast<size_t>(probe.num_params()) : 0))
    throw DataError(fmt::format(
        "checkpoint {} has a momentum buffer of {} values, this run needs {}; resume from "
        "another checkpoint",
        plan.resume_path, momentum, config.sgd.momentum > 0 ? probe.num_params() : 0));
  if (plan.resume->state.step > total_steps(config, data))
    throw UsageError(fmt::format(
        "checkpoint {} is at step {}, beyond this run's {} steps; resume with --steps {} or "
        "more",
        plan.resume_path, plan.resume->state.step, total_steps(config, data),
        plan.resume->state.step));
}

// Where checkpoints will go: created and writable; without --resume it must hold none
// already (keeping the newest N would delete each new one in favour of an older run's
// later steps); what a killed writer left there is removed.
void prepare_writing(const CheckpointSpec& f) {
  prepare_dir(f.dir);
  const std::vector<std::string> existing = list_checkpoints(f.dir);
  if (!f.resume && !existing.empty())
    throw UsageError(fmt::format(
        "--checkpoint-dir {} already holds {} checkpoint{} (newest {}); continue that run "
        "with --resume, or choose an empty directory",
        f.dir, existing.size(), existing.size() == 1 ? "" : "s",
        std::filesystem::path(existing.back()).filename().string()));
  remove_stale_temporaries(f.dir, "ckpt-");
}

}  // namespace

CheckpointPlan plan_checkpoints(const CheckpointSpec& f, const TrainConfig& config,
                                const Dataset& data, int world) {
  CheckpointPlan plan;
  if (!f.resume && f.every == 0) return plan;
  plan.run_config = checkpoint_config(config, data, world);
  if (f.resume) plan_resume(f, config, data, world, plan);
  if (f.every > 0) prepare_writing(f);
  return plan;
}

void check_world(const CheckpointPlan& plan, int world) {
  if (!plan.resume) return;
  CheckpointConfig expected = plan.run_config;
  expected.world = world;
  check_same_config(plan.resume->config, expected, plan.resume_path);
}

std::optional<TrainState> newest_state(const CheckpointPlan& plan, const std::string& dir) {
  if (list_checkpoints(dir).empty()) return std::nullopt;
  FoundCheckpoint found = find_latest_checkpoint(dir);
  CheckpointConfig expected = plan.run_config;
  expected.world = found.checkpoint.config.world;
  check_same_config(found.checkpoint.config, expected, found.path);
  return std::move(found.checkpoint.state);
}

}  // namespace dsgd::sim
