#include "cli/train_command.h"

#include <CLI/CLI.hpp>
#include <memory>

#include <fmt/format.h>

#include "cli/backend.h"
#include "sim/checkpoint_plan.h"
#include "sim/elastic.h"
#include "cli/device_choice.h"
#include "cli/progress.h"
#include "cli/rank_zero.h"
#include "cli/summary.h"
#include "core/errors.h"
#include "core/io/metrics.h"
#include "core/io/npz.h"
#include "core/io/trace.h"
#include "core/io/trace_summary.h"
#include "sim/monitor_sink.h"
#include "core/nn/blas.h"
#include "core/train/config_hash.h"
#include "core/train/train_inputs.h"

namespace dsgd::cli {

void add_train_command(CLI::App& app, TrainFlags& f) {
  CLI::App* train = app.add_subcommand("train", "Train a model with data-parallel synchronous SGD");
  add_train_options(*train, f,
                    sim::kBackendFlag | sim::kTrainingFlags | sim::kClusterFlags |
                        sim::kOutputFlags | sim::kCheckpointFlags | sim::kElasticFlags);
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

// The lanes of a trace in one file: groups of consecutive ranks above kMaxTraceLanes ranks.
int trace_groups(const sim::RunSpec& spec) {
  return spec.backend == sim::Backend::mpi
             ? 0
             : summary_groups_for(spec.outputs.trace_groups, spec.cluster.nodes);
}

std::string trace_note(const sim::RunSpec& spec, const std::string& path) {
  if (spec.outputs.trace.empty()) return "";
  if (spec.backend == sim::Backend::mpi)
    return fmt::format("{} (one file per rank: join them with dsgd trace merge)", path);
  if (const int groups = trace_groups(spec); groups > 0)
    return fmt::format(
        "{} ({} ranks as {} lanes of consecutive ranks, --trace-groups 0 for a lane each; open in "
        "dsgd-gui or ui.perfetto.dev)",
        path, spec.cluster.nodes, groups);
  return fmt::format("{} (open in ui.perfetto.dev)", path);
}

// "dsgd train on 4 simulated nodes", "... on 4 simulated nodes, 3 at the end" (elastic),
// "... on 4 SimGrid ranks (virtual time)", "... on 4 MPI ranks".
std::string what_ran(const sim::RunSpec& spec, int world) {
  const bool mpi = spec.backend == sim::Backend::mpi;
  const int first = mpi ? world : spec.cluster.nodes;
  const std::string at_end = first != world ? fmt::format(", {} at the end", world) : "";
  if (spec.backend == sim::Backend::simgrid)
    return fmt::format("dsgd train on {} SimGrid rank{}{} (virtual time{})", first,
                       first == 1 ? "" : "s", at_end,
                       spec.phantom ? "; phantom payloads: sizes only, nothing averaged" : "");
  return fmt::format("dsgd train on {} {} {}{}", first, mpi ? "MPI" : "simulated",
                     mpi ? (first == 1 ? "rank" : "ranks") : (first == 1 ? "node" : "nodes"),
                     at_end);
}

// Everything one `dsgd train` holds while its ranks run.
struct TrainRun {
  const sim::RunSpec& spec;
  const TrainInputs& inputs;
  const sim::CheckpointPlan& plan;
  RankZeroOutputs& out;
  ChromeTraceWriter& trace;
  sim::ClusterOptions options;
  RankZeroResult rank0;
  int mpi_rank = 0;  // MPI: this process's rank; each writes its own trace
  std::vector<sim::MembershipChange> changes;
  std::string monitor_note;  // the observer's, once its events are sent

  bool sim() const { return spec.backend == sim::Backend::sim; }
  bool mpi() const { return spec.backend == sim::Backend::mpi; }  // a process per rank
  std::string trace_path() const {
    return mpi() ? per_rank_path(spec.outputs.trace, mpi_rank) : spec.outputs.trace;
  }
};

// The ranks of the backend train; returns whether this process hosts rank 0.
bool run_ranks(TrainRun& run) {
  const TrainInputs& inputs = run.inputs;
  const RunChecks checks{.config_hash = config_fingerprint(inputs.config),
                         .config = config_fields(inputs.config),
                         .data_hash = dataset_fingerprint(inputs.data),
                         .nodes = run.spec.cluster.nodes,
                         .check_world =
                             [&](int world) {
                               // An elastic restart goes on from a checkpoint of any world.
                               if (run.spec.elastic.policy == sim::ElasticPolicy::none)
                                 sim::check_world(run.plan, world);
                             },
                         .own_only = true};  // beside other programs of an MPMD job
  return run_on_backend(
      sim::to_string(run.spec.backend), run.options,
      [&](Communicator& comm) {
        if (run.mpi()) run.mpi_rank = comm.rank();
        run.trace.set_world(comm.size());  // an MPI rank's file holds its own events only
        TrainResult r =
            run_training_on(comm, inputs, rank_zero_hooks(comm, run.spec, run.plan, run.out),
                            run.plan.resume ? &run.plan.resume->state : nullptr);
        if (comm.rank() == 0) run.rank0.result = std::move(r), run.rank0.finished = true;
      },
      checks, simgrid_run(run.spec));
}

// --elastic: rounds of simulated nodes (or of one SimGrid simulation) until one ends without a
// crash. Rank 0's result then counts the time, traffic and steps of every round.
void run_elastic_ranks(TrainRun& run) {
  const sim::CheckpointSpec& c = run.spec.outputs.checkpoint;
  run.trace.set_world(run.spec.cluster.nodes);  // events name the first round's ranks
  const Clock::time_point t0 = Clock::now();
  run.changes = sim::run_elastic(
      run.options, run.spec.elastic,
      [&](Communicator& comm, const sim::ElasticRound& round) {
        train_round(comm, round, run.inputs, run.spec, run.plan, run.out, run.rank0);
      },
      [&] { return sim::newest_state(run.plan, c.dir); },
      run.spec.backend == sim::Backend::simgrid ? simgrid_rounds(simgrid_run(run.spec))
                                                : sim::RoundRunner());
  if (!run.rank0.finished) return;
  sim::count_every_round(run.rank0.result, run.rank0.steps);
  run.rank0.result.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
}

int report(TrainRun& run, double total_s) {
  const sim::RunSpec& spec = run.spec;
  const TrainResult& result = run.rank0.result;
  if (!spec.outputs.save.empty()) write_npz(spec.outputs.save, result.params);
  if (run.out.metrics) run.out.metrics->commit();
  RunReport report{.what = what_ran(spec, result.world),
                   .spec = spec,
                   .data = run.inputs.data,
                   .result = result,
                   .total_s = total_s,
                   .trace = trace_note(spec, run.trace_path()),
                   .monitor = run.monitor_note,
                   .membership = sim::describe_changes(run.changes, spec.elastic.policy)};
  if (run.plan.resume)
    report.resumed = fmt::format("{} (step {})", run.plan.resume_path, run.plan.resume->state.step);
  if (!run.out.last_checkpoint.empty())
    report.checkpoints =
        fmt::format("{} (newest {} kept)", run.out.last_checkpoint, spec.outputs.checkpoint.keep);
  print_summary(report);
  return kExitOk;
}

}  // namespace

int run_train(const TrainFlags& flags) {
  const Clock::time_point start = Clock::now();
  const sim::RunSpec spec = sim::build_run_spec(flags.run, sim::RunSpec{});
  set_blas_threads(1);                           // every node is a thread already
  const TrainInputs inputs = load_inputs(spec);  // checked before any node starts
  // The checkpoint to resume from, checked against this run; MPI checks the world later, and
  // an elastic run goes on from any world size (its checkpoints hold the survivors').
  const bool elastic = spec.elastic.policy != sim::ElasticPolicy::none;
  const sim::CheckpointPlan plan = sim::plan_checkpoints(
      spec.outputs.checkpoint, inputs.config, inputs.data, elastic ? 0 : spec.cluster.nodes);
  RankZeroOutputs out{.progress = Progress(total_steps(inputs.config, inputs.data), flags.quiet)};
  if (!spec.outputs.metrics.empty())
    out.metrics = std::make_unique<MetricsWriter>(spec.outputs.metrics);
  ChromeTraceWriter trace({.run_json = sim::run_spec_json(spec)});  // replays show the settings
  TrainRun run{.spec = spec,
               .inputs = inputs,
               .plan = plan,
               .out = out,
               .trace = trace,
               .options = spec.cluster};
  EventFanout events;  // the trace, and the observer watching the run
  if (!spec.outputs.trace.empty()) events.add(&trace);
  const std::unique_ptr<sim::MonitorSink> monitor = sim::make_monitor(spec);
  events.add(monitor.get());
  if (!events.empty()) run.options.events = &events;
  trace.set_lane_groups(trace_groups(spec));
  if (run.sim())  // what the run's descriptors are counted from, before any node starts
    run.options.pairs =
        static_cast<int64_t>(training_pairs(inputs.config, inputs.data, spec.cluster.nodes).size());
  bool hosts_rank0 = true;
  try {
    if (elastic && !run.mpi())  // MPI: scripts/mpirun-elastic starts the job again
      run_elastic_ranks(run);
    else
      hosts_rank0 = run_ranks(run);
  } catch (...) {
    out.progress.finish();
    // A trace of a failed run is what explains it: write what there is.
    if (!spec.outputs.trace.empty() && trace.size() > 0) trace.write(run.trace_path());
    throw;
  }
  out.progress.finish();
  if (!spec.outputs.trace.empty()) trace.write(run.trace_path());
  if (monitor) run.monitor_note = monitor->finish();
  if (!hosts_rank0) return kExitOk;  // MPI: rank 0's process writes and reports
  if (!run.rank0.finished)           // every rank crashed, or rank 0 after the others had finished
    throw CommError(
        "rank 0 crashed (a --crash fault) before the run ended, so nothing was saved or "
        "reported; drop the fault on rank 0, crash another rank, or add --elastic in-process",
        0);
  return report(run, std::chrono::duration<double>(Clock::now() - start).count());
}

}  // namespace dsgd::cli
