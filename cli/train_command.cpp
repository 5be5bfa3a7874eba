#include "cli/train_command.h"

#include <CLI/CLI.hpp>
#include <memory>

#include <fmt/format.h>

#include "cli/backend.h"
#include "sim/checkpoint_plan.h"
#include "cli/device_choice.h"
#include "cli/progress.h"
#include "cli/summary.h"
#include "core/errors.h"
#include "core/io/metrics.h"
#include "core/io/npz.h"
#include "core/io/trace.h"
#include "core/nn/blas.h"
#include "core/train/config_hash.h"
#include "core/train/train_inputs.h"

namespace dsgd::cli {

void add_train_command(CLI::App& app, TrainFlags& f) {
  CLI::App* train = app.add_subcommand("train", "Train a model with data-parallel synchronous SGD");
  add_train_options(*train, f,
                    sim::kBackendFlag | sim::kTrainingFlags | sim::kClusterFlags |
                        sim::kOutputFlags | sim::kCheckpointFlags);
  train->footer(
      "Checkpoints: --checkpoint-every K --checkpoint-dir D writes D/ckpt-<step>.npz every K "
      "steps\n(parameters, momentum, step, data position, config hash), atomically, keeping "
      "the newest\n--keep-checkpoints N. --resume continues from the newest intact one (or "
      "--resume FILE)\nwith the same flags; it ends with the parameters of a run never "
      "stopped, bit for bit.");
}

void add_train_options(CLI::App& command, TrainFlags& f, unsigned groups) {
  sim::add_run_flags(command, f.run, groups, sim::RunSpec{});
  command.add_flag("--quiet,-q", f.quiet, "No progress bar");
}

TrainInputs load_inputs(const sim::RunSpec& spec) {
  TrainConfig config = sim::train_config(spec);
  config.device = make_device_factory(spec, config);  // checks --device before the data
  return load_train_inputs(config, spec.data, spec.init);
}

namespace {

// What rank 0 reports to the command line as the run goes, and writes at its end.
struct RankZeroOutputs {
  std::unique_ptr<MetricsWriter> metrics;
  Progress progress;
  std::string last_checkpoint;  // written by rank 0's thread
};

TrainHooks rank_zero_hooks(Communicator& comm, const sim::RunSpec& spec,
                           const sim::CheckpointPlan& plan, RankZeroOutputs& out) {
  TrainHooks hooks;
  if (comm.rank() != 0) return hooks;
  hooks.on_step = [&out](const StepMetrics& m) {
    if (out.metrics) out.metrics->write(m);
    out.progress.update(m);
  };
  const sim::CheckpointSpec& c = spec.outputs.checkpoint;
  if (c.every > 0) {  // every rank holds the same state: rank 0 writes it
    CheckpointConfig saved = plan.run_config;
    saved.world = comm.size();
    hooks.checkpoint_every = c.every;
    hooks.on_checkpoint = [&out, &c, saved](const TrainState& state) {
      out.last_checkpoint = save_checkpoint(c.dir, {saved, state}, c.keep);
    };
  }
  return hooks;
}

std::string trace_note(const sim::RunSpec& spec, const std::string& path) {
  if (spec.outputs.trace.empty()) return "";
  if (spec.backend == sim::Backend::mpi)
    return fmt::format("{} (one file per rank: join them with dsgd trace merge)", path);
  return fmt::format("{} (open in ui.perfetto.dev)", path);
}

std::string what_ran(const sim::RunSpec& spec, int world) {
  const bool sim = spec.backend == sim::Backend::sim;
  return fmt::format("dsgd train on {} {} {}", world, sim ? "simulated" : "MPI",
                     sim ? (world == 1 ? "node" : "nodes") : (world == 1 ? "rank" : "ranks"));
}

}  // namespace

int run_train(const TrainFlags& flags) {
  const Clock::time_point start = Clock::now();
  const sim::RunSpec spec = sim::build_run_spec(flags.run, sim::RunSpec{});
  set_blas_threads(1);                           // every node is a thread already
  const TrainInputs inputs = load_inputs(spec);  // checked before any node starts
  const bool sim = spec.backend == sim::Backend::sim;
  // The checkpoint to resume from, checked against this run; MPI checks the world later.
  const sim::CheckpointPlan plan = sim::plan_checkpoints(spec.outputs.checkpoint, inputs.config,
                                                         inputs.data, spec.cluster.nodes);
  RankZeroOutputs out{.progress = Progress(total_steps(inputs.config, inputs.data), flags.quiet)};
  if (!spec.outputs.metrics.empty())
    out.metrics = std::make_unique<MetricsWriter>(spec.outputs.metrics);
  ChromeTraceWriter trace({.run_json = sim::run_spec_json(spec)});  // replays show the settings
  sim::ClusterOptions options{spec.cluster};
  if (!spec.outputs.trace.empty()) options.events = &trace;
  if (sim) {  // what the run's descriptors are counted from, before any node starts
    options.pairs =
        static_cast<int64_t>(training_pairs(inputs.config, inputs.data, spec.cluster.nodes).size());
  }

  TrainResult result;
  bool rank0_finished = false;  // a crash fault on rank 0 leaves nothing to report
  int mpi_rank = 0;             // MPI: this process's rank; each writes its own trace
  auto trace_path = [&] {
    return sim ? spec.outputs.trace : per_rank_path(spec.outputs.trace, mpi_rank);
  };
  const RunChecks checks{.config_hash = config_fingerprint(inputs.config),
                         .config = config_fields(inputs.config),
                         .data_hash = dataset_fingerprint(inputs.data),
                         .nodes = spec.cluster.nodes,
                         .check_world = [&](int world) { sim::check_world(plan, world); },
                         .own_only = true};  // beside other programs of an MPMD job
  bool hosts_rank0 = false;
  try {
    hosts_rank0 = run_on_backend(
        sim::to_string(spec.backend), options,
        [&](Communicator& comm) {
          if (!sim) mpi_rank = comm.rank();
          trace.set_world(comm.size());  // an MPI rank's file holds its own events only
          TrainResult r = run_training_on(comm, inputs, rank_zero_hooks(comm, spec, plan, out),
                                          plan.resume ? &plan.resume->state : nullptr);
          if (comm.rank() == 0) {
            result = std::move(r);
            rank0_finished = true;
          }
        },
        checks);
  } catch (...) {
    out.progress.finish();
    // A trace of a failed run is what explains it: write what there is.
    if (!spec.outputs.trace.empty() && trace.size() > 0) trace.write(trace_path());
    throw;
  }
  out.progress.finish();
  if (!spec.outputs.trace.empty()) trace.write(trace_path());
  if (!hosts_rank0) return kExitOk;  // MPI: rank 0's process writes and reports
  if (!rank0_finished)               // every rank crashed, or rank 0 after the others had finished
    throw CommError(
        "rank 0 crashed (a --crash fault) before the run ended, so nothing was saved or "
        "reported; drop the fault on rank 0, or crash another rank",
        0);
  if (!spec.outputs.save.empty()) write_npz(spec.outputs.save, result.params);
  if (out.metrics) out.metrics->commit();
  RunReport report{.what = what_ran(spec, result.world),
                   .spec = spec,
                   .data = inputs.data,
                   .result = result,
                   .total_s = std::chrono::duration<double>(Clock::now() - start).count(),
                   .trace = trace_note(spec, trace_path())};
  if (plan.resume)
    report.resumed = fmt::format("{} (step {})", plan.resume_path, plan.resume->state.step);
  if (!out.last_checkpoint.empty())
    report.checkpoints =
        fmt::format("{} (newest {} kept)", out.last_checkpoint, spec.outputs.checkpoint.keep);
  print_summary(report);
  return kExitOk;
}

}  // namespace dsgd::cli
