#include "cli/train_command.h"

#include <CLI/CLI.hpp>
#include <cmath>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "cli/backend.h"
#include "cli/device_choice.h"
#include "cli/progress.h"
#include "cli/train_run.h"
#include "core/errors.h"
#include "core/io/metrics.h"
#include "core/io/npz.h"
#include "core/io/trace.h"
#include "core/nn/blas.h"
#include "core/train/config_hash.h"
#include "core/train/trainer.h"
#include "sim/cluster.h"
#include "sim/link_model.h"
#include "sim/network.h"

namespace dsgd::cli {
namespace {

void print_summary(const TrainFlags& f, const Dataset& data, const TrainConfig& config,
                   const TrainResult& r, const sim::ClusterOptions& options, double total_s) {
  fmt::print("\ndsgd train on {} {} {}: {} on {} ({} train / {} test), global batch {}, {} steps\n",
             r.world, f.backend == "sim" ? "simulated" : "MPI",
             r.world == 1 ? (f.backend == "sim" ? "node" : "rank")
                          : (f.backend == "sim" ? "nodes" : "ranks"),
             config.model.str(), data.name, data.train.size(), data.test.size(),
             config.global_batch, r.steps);
  fmt::print("  final loss       {:.4f} (training, last step)\n", r.final_loss);
  if (r.test_accuracy)
    fmt::print("  test accuracy    {:.2f} %  (test loss {:.4f})\n", *r.test_accuracy * 100,
               r.test_loss.value_or(0));
  else if (r.test_loss)
    fmt::print("  test loss        {:.4f}\n", *r.test_loss);
  const double busy = r.compute_s + r.comm_s;
  fmt::print("  wall time        {:.2f} s  ({:.2f} ms per step)\n", total_s,
             r.wall_s * 1e3 / std::max<int64_t>(r.steps, 1));
  if (f.device != "cpu") fmt::print("  device           {}\n", describe_device(f, r.world));
  if (!r.device_all_reduce.empty())
    fmt::print("  gradients        summed on the GPUs by {} (not through the {})\n",
               r.device_all_reduce, f.backend == "sim" ? "simulated network" : "MPI library");
  fmt::print("  communication    {:.2f} s of {:.2f} s busy on rank 0 ({:.1f} %), {:.2f} MB sent\n",
             r.comm_s, busy, busy > 0 ? 100 * r.comm_s / busy : 0.0, r.bytes_sent / 1e6);
  if (f.backend == "sim") {
    fmt::print("  network          {}, all-reduce {}\n", describe_network(options),
               r.device_all_reduce.empty() ? to_string(config.allreduce) : "nccl");
    if (r.model_s >= 0)
      fmt::print(
          "  model time       {:.3f} s ({:.2f} ms per step, alpha-beta links, {:g} GFLOP/s "
          "nodes)\n",
          r.model_s, r.model_s * 1e3 / std::max<int64_t>(r.steps, 1), options.node.gflops);
  }
}

}  // namespace

void add_train_command(CLI::App& app, TrainFlags& f) {
  CLI::App* train = app.add_subcommand("train", "Train a model with data-parallel synchronous SGD");
  add_train_options(*train, f);
  add_checkpoint_flags(*train, f.checkpoint);
  train->footer(
      "Checkpoints: --checkpoint-every K --checkpoint-dir D writes D/ckpt-<step>.npz every K "
      "steps\n(parameters, momentum, step, data position, config hash), atomically, keeping "
      "the newest\n--keep-checkpoints N. --resume continues from the newest intact one (or "
      "--resume FILE)\nwith the same flags; it ends with the parameters of a run never "
      "stopped, bit for bit.");
}

void add_train_options(CLI::App& command, TrainFlags& f) {
  CLI::App* t = &command;
  t->add_option("--backend", f.backend, "sim (simulated nodes over loopback TCP) or mpi")
      ->check(CLI::IsMember({"sim", "mpi"}));
  t->add_option("--model", f.model, "softmax | mlp:H[,H...] | linear")->capture_default_str();
  t->add_option("--data", f.data, kDataSpecHelp)->capture_default_str();
  t->add_option("--batch", f.batch, "Global batch size, split across the nodes")
      ->capture_default_str();
  t->add_option("--lr", f.lr, "Learning rate")->capture_default_str();
  t->add_option("--momentum", f.momentum, "SGD momentum")->capture_default_str();
  t->add_option("--weight-decay", f.weight_decay, "L2 weight decay")->capture_default_str();
  t->add_flag("--nesterov", f.nesterov, "Nesterov momentum");
  t->add_option("--steps", f.steps, "Number of SGD steps (instead of --epochs)")
      ->check(integer_at_least(1, "SGD steps; leave --steps out for 5 epochs"));
  t->add_option("--epochs", f.epochs, "Passes over the training data (default 5)")
      ->check(integer_at_least(1, "passes over the data; the default is 5"));
  t->add_option("--seed", f.seed, "Seed for initialisation and shuffling")
      ->capture_default_str()
      ->check(integer_at_least(0, "a seed for initialisation and shuffling"));
  t->add_flag("--no-shuffle", f.no_shuffle, "Take batches in file order");
  t->add_option("--eval-every", f.eval_every, "Evaluate every K steps (default: each epoch)");
  t->add_option("--init", f.init, "Initial parameters (.npz, PyTorch nn.Linear layout)");
  t->add_option("--save", f.save, "Save the final parameters (.npz)");
  t->add_option("--metrics", f.metrics, "Write one JSON line per step");
  t->add_option("--allreduce", f.allreduce,
                "auto | naive | ring | tree | halving_doubling | native | nccl (--device cuda)")
      ->capture_default_str();
  t->add_option("--device", f.device, "cpu | cuda (each rank its local rank's GPU) | cuda:K")
      ->capture_default_str();
  t->add_flag("--quiet,-q", f.quiet, "No progress bar");
  t->add_option("--trace", f.trace, "Write a Chrome trace (open in ui.perfetto.dev)");
  add_sim_flags(*t, f.sim);
}

int run_train(const TrainFlags& f) {
  const Clock::time_point start = Clock::now();
  sim::ClusterOptions options = build_cluster_options(f.sim);
  if (f.backend == "mpi") check_mpi_flags(f.sim);
  set_blas_threads(1);  // every node is a thread already
  // Flags, data and --init, checked before any node starts (shared with dsgd node).
  const TrainInputs inputs = load_train_inputs(f);
  const TrainConfig& config = inputs.config;
  const Dataset& data = inputs.data;
  const std::vector<NamedTensor>& init = inputs.init;
  // The checkpoint to resume from, checked against this run; MPI checks the world later.
  const CheckpointPlan plan = plan_checkpoints(
      f.checkpoint, config, data, f.backend == "sim" ? options.nodes : std::max(f.sim.nodes, 0));
  std::string last_checkpoint;  // written by rank 0's thread
  std::unique_ptr<MetricsWriter> metrics;
  if (!f.metrics.empty()) metrics = std::make_unique<MetricsWriter>(f.metrics);
  Progress progress(total_steps(config, data), f.quiet);
  ChromeTraceWriter trace;
  if (!f.trace.empty()) options.events = &trace;

  TrainResult result;
  bool hosts_rank0 = false;
  int mpi_rank = 0;  // MPI: this process's rank; each writes its own trace
  auto trace_path = [&] { return f.backend == "mpi" ? per_rank_path(f.trace, mpi_rank) : f.trace; };
  const RunChecks checks{.config_hash = config_fingerprint(config),
                         .data_hash = dataset_fingerprint(data),
                         .nodes = f.sim.nodes};
  try {
    hosts_rank0 = run_on_backend(
        f.backend, options,
        [&](Communicator& comm) {
          if (f.backend == "mpi") mpi_rank = comm.rank();
          check_world(plan, comm.size());
          TrainHooks hooks;
          if (comm.rank() == 0)
            hooks.on_step = [&](const StepMetrics& m) {
              if (metrics) metrics->write(m);
              progress.update(m);
            };
          if (comm.rank() == 0 && f.checkpoint.every > 0) {  // every rank holds the same state
            CheckpointConfig saved = plan.run_config;
            saved.world = comm.size();
            hooks.checkpoint_every = f.checkpoint.every;
            hooks.on_checkpoint = [&, saved](const TrainState& state) {
              last_checkpoint =
                  save_checkpoint(f.checkpoint.dir, {saved, state}, f.checkpoint.keep);
            };
          }
          TrainResult r = train(comm, data, config, f.init.empty() ? nullptr : &init, hooks,
                                plan.resume ? &plan.resume->state : nullptr);
          if (comm.rank() == 0) result = std::move(r);
        },
        checks);
  } catch (...) {
    progress.finish();
    // A trace of a failed run is what explains it: write what there is.
    if (!f.trace.empty() && trace.size() > 0) trace.write(trace_path());
    throw;
  }
  progress.finish();
  if (!f.trace.empty()) trace.write(trace_path());
  if (!hosts_rank0) return kExitOk;  // MPI: rank 0's process writes and reports
  if (!f.save.empty()) write_npz(f.save, result.params);
  if (metrics) metrics->commit();
  print_summary(f, data, config, result, options,
                std::chrono::duration<double>(Clock::now() - start).count());
  if (plan.resume)
    fmt::print("  resumed from     {} (step {})\n", plan.resume_path, plan.resume->state.step);
  if (!last_checkpoint.empty())
    fmt::print("  checkpoints      {} (newest {} kept)\n", last_checkpoint, f.checkpoint.keep);
  if (!f.save.empty()) fmt::print("  saved            {}\n", f.save);
  if (!f.metrics.empty()) fmt::print("  metrics          {}\n", f.metrics);
  if (!f.trace.empty() && f.backend == "mpi")
    fmt::print("  trace            {} (one file per rank: join them with dsgd trace merge)\n",
               trace_path());
  else if (!f.trace.empty())
    fmt::print("  trace            {} (open in ui.perfetto.dev)\n", f.trace);
  return kExitOk;
}

}  // namespace dsgd::cli
