#include "cli/checkpoint_flags.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/nn/model.h"

namespace dsgd::cli {

void add_checkpoint_flags(CLI::App& t, CheckpointFlags& f) {
  t.add_option("--checkpoint-every", f.every,
               "Write a checkpoint every K steps into --checkpoint-dir (rank 0 writes)");
  t.add_option("--checkpoint-dir", f.dir,
               "Directory of checkpoints ckpt-NNNNNNNNNN.npz (created when missing)");
  t.add_option("--keep-checkpoints", f.keep, "Keep the newest N checkpoints")
      ->capture_default_str();
  t.add_option_function<std::string>(
       "--resume",
       [&f](const std::string& path) {
         f.resume = true;
         f.resume_path = path;
       },
       "Continue from the newest intact checkpoint in --checkpoint-dir, or from the file "
       "PATH; the final parameters equal an uninterrupted run's, bit for bit")
      ->expected(0, 1)
      ->type_name("[PATH]");
}

namespace {

void check_flags(const CheckpointFlags& f) {
  if (f.every < 0)
    throw UsageError(fmt::format(
        "--checkpoint-every {}: give a number of steps >= 1 (or leave it out)", f.every));
  if (f.every > 0 && f.dir.empty())
    throw UsageError(fmt::format(
        "--checkpoint-every {} needs --checkpoint-dir DIR to write them into", f.every));
  if (f.keep < 1)
    throw UsageError(fmt::format("--keep-checkpoints {}: keep at least 1 checkpoint", f.keep));
  if (!f.dir.empty() && f.every == 0 && !f.resume)
    throw UsageError(fmt::format(
        "--checkpoint-dir {} is given but nothing uses it: add --checkpoint-every K to write "
        "checkpoints, or --resume to continue from one",
        f.dir));
  if (f.resume && f.resume_path.empty() && f.dir.empty())
    throw UsageError(
        "--resume needs --checkpoint-dir DIR (to take its newest checkpoint) or a file: "
        "--resume PATH");
}

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

CheckpointPlan plan_checkpoints(const CheckpointFlags& f, const TrainConfig& config,
                                const Dataset& data, int world) {
  check_flags(f);
  CheckpointPlan plan;
  if (!f.resume && f.every == 0) return plan;
  plan.run_config = checkpoint_config(config, data, world);
  if (f.resume) {
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
    Mlp probe = Mlp::from_spec(config.model, data.features, model_outputs(config.model, data));
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
  if (f.every > 0) prepare_dir(f.dir);
  return plan;
}

void check_world(const CheckpointPlan& plan, int world) {
  if (!plan.resume) return;
  CheckpointConfig expected = plan.run_config;
  expected.world = world;
  check_same_config(plan.resume->config, expected, plan.resume_path);
}

}  // namespace dsgd::cli
