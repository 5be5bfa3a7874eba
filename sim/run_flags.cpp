// Sections: [options] [checks] [cluster] [run].
#include "sim/run_flags.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdlib>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "core/data/dataset.h"
#include "core/errors.h"
#include "core/io/monitor_wire.h"
#include "core/io/trace_summary.h"
#include "sim/cluster_shape.h"
#include "sim/link_model.h"
#include "sim/scenario.h"

namespace dsgd::sim {

// ---------------------------------------------------------------------------------------
// [options]
// ---------------------------------------------------------------------------------------

RunFlags run_flags(const RunSpec& d) {
  RunFlags f;
  f.backend = to_string(d.backend);
  f.payload = d.phantom ? "phantom" : "real";
  f.compute = d.measured_compute ? "measured" : "flops";
  f.network_model = d.lv08 ? "lv08" : "cm02";
  f.model = d.model;
  f.data = d.data;
  f.batch = d.batch;
  f.lr = d.sgd.lr;
  f.momentum = d.sgd.momentum;
  f.weight_decay = d.sgd.weight_decay;
  f.nesterov = d.sgd.nesterov;
  f.seed = d.seed;
  f.no_shuffle = !d.shuffle;
  f.eval_every = d.eval_every;
  f.allreduce = allreduce_name(d);
  f.bucket_mb = d.bucket_mb;
  f.device = d.device;
  f.checkpoint.keep = d.outputs.checkpoint.keep;
  return f;
}

namespace {

// The help says each flag's default as the command that reads it has it (dsgd-gui's run is
// not dsgd train's).
std::string length_default(const RunSpec& d) {
  return d.steps > 0 ? fmt::format("default {} steps", d.steps)
                     : fmt::format("default {} epochs", d.epochs);
}

void add_training_flags(CLI::App& t, RunFlags& f, const RunSpec& d) {
  t.add_option("--model", f.model, "softmax | mlp:H[,H...] | linear | cnn:lenet")
      ->capture_default_str();
  t.add_option("--data", f.data, kDataSpecHelp)->capture_default_str();
  t.add_option("--batch", f.batch, "Global batch size, split across the nodes")
      ->capture_default_str();
  t.add_option("--lr", f.lr, "Learning rate")->capture_default_str();
  t.add_option("--momentum", f.momentum, "SGD momentum")->capture_default_str();
  t.add_option("--weight-decay", f.weight_decay, "L2 weight decay")->capture_default_str();
  t.add_flag("--nesterov", f.nesterov, "Nesterov momentum");
  t.add_option("--steps", f.steps,
               fmt::format("Number of SGD steps (instead of --epochs; {})", length_default(d)))
      ->check(integer_at_least(1, "SGD steps; leave --steps out for 5 epochs"));
  t.add_option("--epochs", f.epochs,
               fmt::format("Passes over the training data ({})", length_default(d)))
      ->check(integer_at_least(1, "passes over the data; the default is 5"));
  t.add_option("--seed", f.seed, "Seed for initialisation and shuffling")
      ->capture_default_str()
      ->check(integer_at_least(0, "a seed for initialisation and shuffling"));
  t.add_flag("--no-shuffle", f.no_shuffle, "Take batches in file order");
  t.add_option("--eval-every", f.eval_every, "Evaluate every K steps (default: each epoch)");
  t.add_option("--init", f.init, "Initial parameters (.npz, PyTorch nn.Linear layout)");
  t.add_option("--allreduce", f.allreduce,
               algorithm_names(" | ", " | ") + " | nccl (--device cuda)")
      ->capture_default_str();
  t.add_option("--bucket-mb", f.bucket_mb,
               "All-reduce the gradients in DDP's buckets of this many MB (the first 1 MB), "
               "each while backward goes on, as PyTorch's bucket_cap_mb (0: one all_reduce "
               "after backward)")
      ->capture_default_str();
  t.add_option("--first-bucket-mb", f.first_bucket_mb,
               fmt::format("With --bucket-mb: the first bucket's cap, as torch.distributed's "
                           "_DEFAULT_FIRST_BUCKET_BYTES (default {:g})",
                           d.first_bucket_mb));
  t.add_option("--local-sgd", f.local_sgd,
               "Post-local SGD: from --local-sgd-start on, each rank steps alone and the ranks "
               "average their parameters every H steps (PyTorch's PeriodicModelAverager)")
      ->check(integer_at_least(1, "steps between averages"))
      ->type_name("H");
  t.add_option("--local-sgd-start", f.local_sgd_start,
               "With --local-sgd: the step (from 0) of the first local update; the steps "
               "before it all-reduce their gradients (leave it out to start at once)")
      ->check(integer_at_least(0, "the step local SGD starts at"))
      ->type_name("K");
  t.add_option("--compress", f.compress,
               "A DDP communication hook for the gradients: fp16 | bf16 | powersgd:R | "
               "topk:RATIO (none: exact sums)")
      ->type_name("HOOK");
  t.add_option("--powersgd-start", f.powersgd_start,
               fmt::format("With --compress powersgd: the steps that all-reduce plainly first, "
                           "as PowerSGDState's start_powerSGD_iter (default {})",
                           d.powersgd_start))
      ->check(integer_at_least(0, "plain steps before PowerSGD"))
      ->type_name("N");
  t.add_option("--parameter-servers", f.parameter_servers,
               "Asynchronous SGD: the last S ranks hold shards of the parameters, the others "
               "are workers that pull, compute and push without waiting for each other")
      ->check(integer_at_least(1, "server ranks"))
      ->type_name("S");
  t.add_option("--max-staleness", f.max_staleness,
               "With --parameter-servers: how many steps a worker may run ahead of the slowest "
               "(0: synchronous; leave it out for no bound)")
      ->check(integer_at_least(0, "steps ahead"))
      ->type_name("T");
  t.add_option("--device", f.device, "cpu | cuda (each rank its local rank's GPU) | cuda:K")
      ->capture_default_str();
}

void add_cluster_flags(CLI::App& t, RunFlags& f, const RunSpec& d) {
  const LinkSpec& link = d.cluster.network.link;
  t.add_option("--nodes", f.nodes,
               fmt::format("Number of ranks: 1-{} simulated nodes, 1-{} SimGrid ranks (default {})",
                           kMaxNodes, kMaxSimgridRanks, d.cluster.nodes));
  t.add_option(
      "--scenario", f.scenario,
      "Cluster scenario: a shipped one by name (flaky-wan, straggler, ...) or a TOML file");
  t.add_option("--topology", f.topology,
               "mesh | switch | racks; with --backend simgrid also fat-tree, torus, dragonfly, "
               "each with an optional :shape (docs/simgrid.md)");
  t.add_option(
      "--latency", f.latency,
      fmt::format("One-way link latency, e.g. 2ms (default {})", format_duration(link.latency_s)));
  t.add_option("--bandwidth", f.bandwidth,
               fmt::format("Link bandwidth, e.g. 1Gbit or 100MB/s (default {})",
                           format_bandwidth(link.bandwidth_Bps)));
  t.add_option("--jitter", f.jitter, "Extra one-way delay, uniform in [0, J], e.g. 200us");
  t.add_option("--loss", f.loss, "Probability a message is lost and resent after 200 ms");
  t.add_option("--straggler", f.stragglers, "RANK:FACTOR, e.g. 2:3 (repeatable)");
  t.add_option("--crash", f.crashes, "RANK@STEP or RANK@TIME, e.g. 1@20 or 1@1.5s (repeatable)");
  t.add_option("--gflops", f.gflops,
               fmt::format("Every node's compute rate in model time, GFLOP/s (default {:g}; a "
                           "straggler's is divided by its factor)",
                           d.cluster.node.gflops));
  t.add_option("--timeout", f.timeout,
               fmt::format("Deadline of every blocking call (default {:g}s)",
                           d.cluster.timeout.count() / 1e3));
  t.add_option("--eager-limit", f.eager_limit,
               fmt::format("Largest send that completes without its receive, as MPI's eager "
                           "protocol, e.g. 4K (default {} bytes, as Open MPI over TCP)",
                           d.cluster.node.eager_bytes));
}

void add_elastic_flags(CLI::App& t, RunFlags& f, const RunSpec& d) {
  t.add_option("--elastic", f.elastic,
               "When a node dies, the others go on: restart (torchrun's: again from the newest "
               "checkpoint) or in-process (Horovod's: the survivors keep their state); none "
               "(the default): a crash ends the run")
      ->type_name("POLICY");
  t.add_option("--max-restarts", f.max_restarts,
               fmt::format("With --elastic: how many membership changes a run may go through "
                           "(default {})",
                           d.elastic.max_restarts))
      ->check(integer_at_least(0, "membership changes"))
      ->type_name("N");
}

void add_output_flags(CLI::App& t, RunFlags& f) {
  t.add_option("--save", f.save, "Save the final parameters (.npz)");
  t.add_option("--metrics", f.metrics, "Write one JSON line per step");
  t.add_option("--trace", f.trace, "Write a Chrome trace (open in ui.perfetto.dev)");
  t.add_option(
       "--trace-groups", f.trace_groups,
       fmt::format("With --trace: G lanes, each a group of consecutive ranks, their messages "
                   "between groups joined per collective (default {} above {} ranks; 0: a "
                   "lane per rank)",
                   kSummaryGroups, kMaxTraceLanes))
      ->check(integer_at_least(0, "lanes"))
      ->type_name("G");
  t.add_option("--monitor", f.monitor,
               "Stream the events as they happen to an observer, e.g. dsgd-gui --watch 29600 "
               "(never slows the run; DSGD_MONITOR gives it to every MPI rank)")
      ->type_name("HOST:PORT");
}

void add_checkpoint_flags(CLI::App& t, CheckpointSpec& c) {
  t.add_option("--checkpoint-every", c.every,
               "Write a checkpoint every K steps into --checkpoint-dir (rank 0 writes)");
  t.add_option("--checkpoint-dir", c.dir,
               "Directory of checkpoints ckpt-NNNNNNNNNN.npz (created when missing)");
  t.add_option("--keep-checkpoints", c.keep, "Keep the newest N checkpoints")
      ->capture_default_str();
  t.add_option_function<std::string>(
       "--resume",
       [&c](const std::string& path) {
         c.resume = true;
         c.resume_path = path;
       },
       "Continue from the newest intact checkpoint in --checkpoint-dir, or from the file "
       "PATH; the final parameters equal an uninterrupted run's, bit for bit")
      ->expected(0, 1)
      ->type_name("[PATH]");
}

// An empty value ("--save ''") would read as "not given" and be ignored without a word.
CLI::Validator not_empty() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        return text.empty() ? "an empty value is not allowed; give one, or leave the flag out" : "";
      },
      "");
}

}  // namespace

void add_run_flags(CLI::App& app, RunFlags& flags, unsigned groups, const RunSpec& defaults) {
  flags = run_flags(defaults);
  const size_t before = app.get_options().size();
  if (groups & kBackendFlag)
    app.add_option("--backend", flags.backend,
                   "sim (simulated nodes over loopback TCP), mpi, or simgrid (virtual time)")
        ->check(CLI::IsMember({"sim", "mpi", "simgrid"}))
        ->capture_default_str();
  if (groups & kBackendFlag)
    app.add_option("--payload", flags.payload,
                   "real (messages carry the floats) or phantom (--backend simgrid: messages "
                   "carry their size only and reductions are skipped; for thousands of ranks)")
        ->check(CLI::IsMember({"real", "phantom"}))
        ->capture_default_str();
  if (groups & kBackendFlag)
    app.add_option("--compute", flags.compute,
                   "flops (the model's flops at --gflops) or measured (--backend simgrid: the "
                   "CPU time this process took to compute)")
        ->check(CLI::IsMember({"flops", "measured"}))
        ->capture_default_str();
  if (groups & kBackendFlag)
    app.add_option("--network-model", flags.network_model,
                   "cm02 (SimGrid's CM02 without corrections: dsgd's alpha-beta times where "
                   "links are not shared) or lv08 (--backend simgrid: with SimGrid's TCP "
                   "corrections)")
        ->check(CLI::IsMember({"cm02", "lv08"}))
        ->capture_default_str();
  if (groups & kTrainingFlags) add_training_flags(app, flags, defaults);
  if (groups & kClusterFlags) add_cluster_flags(app, flags, defaults);
  if (groups & kOutputFlags) add_output_flags(app, flags);
  if (groups & kCheckpointFlags) add_checkpoint_flags(app, flags.checkpoint);
  if (groups & kElasticFlags) add_elastic_flags(app, flags, defaults);
  const std::vector<CLI::Option*> options = app.get_options();
  for (size_t i = before; i < options.size(); ++i)
    if (options[i]->get_type_name() == "TEXT" && options[i]->get_expected_min() > 0)
      options[i]->check(not_empty());
}

CLI::Validator integer_at_least(int64_t min, const std::string& hint) {
  return CLI::Validator(
      [min, hint](std::string& text) -> std::string {
        const char* end = text.data() + text.size();
        bool ok = false;
        if (min >= 0) {  // unsigned, so that every uint64 seed fits; from_chars refuses '-'
          uint64_t v = 0;
          const auto [ptr, ec] = std::from_chars(text.data(), end, v);
          ok = ec == std::errc() && ptr == end && v >= static_cast<uint64_t>(min);
        } else {
          int64_t v = 0;
          const auto [ptr, ec] = std::from_chars(text.data(), end, v);
          ok = ec == std::errc() && ptr == end && v >= min;
        }
        if (ok) return {};
        return fmt::format("'{}' is not allowed; use a whole number of {} or more ({})", text, min,
                           hint);
      },
      fmt::format("INT>={}", min));
}

// ---------------------------------------------------------------------------------------
// [checks]
// ---------------------------------------------------------------------------------------

void check_output_path(const std::string& path, const char* flag) {
  if (path.empty()) return;
  const std::filesystem::path p(path);
  const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : ".";
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw UsageError(fmt::format("{} {}: directory '{}' does not exist; create it first", flag,
                                 path, dir.string()));
  if (access(dir.c_str(), W_OK) != 0)
    throw UsageError(
        fmt::format("{} {}: directory '{}' is not writable", flag, path, dir.string()));
  if (std::filesystem::is_directory(p, ec))
    throw UsageError(fmt::format("{} {}: is a directory; give a file name", flag, path));
}

namespace {

void check_checkpoint_flags(const CheckpointSpec& c) {
  if (c.every < 0)
    throw UsageError(fmt::format(
        "--checkpoint-every {}: give a number of steps >= 1 (or leave it out)", c.every));
  if (c.every > 0 && c.dir.empty())
    throw UsageError(fmt::format(
        "--checkpoint-every {} needs --checkpoint-dir DIR to write them into", c.every));
  if (c.keep < 1)
    throw UsageError(fmt::format("--keep-checkpoints {}: keep at least 1 checkpoint", c.keep));
  if (!c.dir.empty() && c.every == 0 && !c.resume)
    throw UsageError(fmt::format(
        "--checkpoint-dir {} is given but nothing uses it: add --checkpoint-every K to write "
        "checkpoints, or --resume to continue from one",
        c.dir));
  if (c.resume && c.resume_path.empty() && c.dir.empty())
    throw UsageError(
        "--resume needs --checkpoint-dir DIR (to take its newest checkpoint) or a file: "
        "--resume PATH");
}

// --backend mpi runs on a real network with mpirun's ranks: the simulator's network and
// fault flags mean nothing there. --nodes and --timeout stay.
void check_mpi_flags(const RunFlags& f) {
  const std::pair<const char*, bool> sim_only[] = {
      {"--scenario", !f.scenario.empty()},       {"--topology", !f.topology.empty()},
      {"--latency", !f.latency.empty()},         {"--bandwidth", !f.bandwidth.empty()},
      {"--jitter", !f.jitter.empty()},           {"--loss", !f.loss.empty()},
      {"--straggler", !f.stragglers.empty()},    {"--crash", !f.crashes.empty()},
      {"--eager-limit", !f.eager_limit.empty()}, {"--gflops", f.gflops != -1},
  };
  for (const auto& [flag, given] : sim_only)
    if (given)
      throw UsageError(
          fmt::format("{} is for simulated nodes; with --backend mpi the network "
                      "is the real one: drop {} or use --backend sim",
                      flag, flag));
}

// What the SimGrid backend cannot run: a GPU. Its network limits are checked when it starts
// (sim/simgrid/sg_platform.h).
void check_simgrid(const RunSpec& s) {
  if (s.measured_compute && s.bucket_mb > 0)
    throw UsageError(fmt::format(
        "--bucket-mb {} needs --compute flops: DDP's buckets start when backward reaches "
        "them, a time only the flops model knows; drop --compute measured or --bucket-mb",
        s.bucket_mb));
  if (s.device != "cpu")
    throw UsageError(fmt::format(
        "--device {} does not run on --backend simgrid yet: drop it, or use --backend sim",
        s.device));
  const NetworkConfig& net = s.cluster.network;
  if (is_cluster_topology(net.topology)) resolve_shape(net.topology, net.shape, s.cluster.nodes);
  if (s.phantom && s.parameter_servers > 0)
    throw UsageError(fmt::format(
        "--parameter-servers {} does not run with --payload phantom: servers and workers "
        "read what each other's messages carry; drop one of the two",
        s.parameter_servers));
}

void check_ranks(const ClusterOptions& c) {
  for (const auto& [rank, _] : c.node_overrides)
    if (rank >= c.nodes)
      throw UsageError(fmt::format("a fault names rank {}, but there are only {} nodes (0..{})",
                                   rank, c.nodes, c.nodes - 1));
  for (const LinkOverride& o : c.network.overrides)
    if (std::max(o.from, o.to) >= c.nodes)
      throw UsageError(fmt::format("a link override names rank {}, but there are only {} nodes",
                                   std::max(o.from, o.to), c.nodes));
  for (const auto& o : c.network.outages)
    for (auto [a, b] : o.links)
      if (a >= c.nodes || b >= c.nodes)
        throw UsageError(fmt::format("an outage names rank {}, but there are only {} nodes",
                                     std::max(a, b), c.nodes));
}

double parse_loss(const std::string& text) {
  double loss = -1;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), loss);
  if (ec != std::errc() || ptr != text.data() + text.size() || !(loss >= 0 && loss <= 0.5))
    throw UsageError(fmt::format("--loss '{}': give a probability from 0 to 0.5, e.g. 0.01", text));
  return loss;
}

std::chrono::milliseconds parse_timeout(const std::string& text) {
  const double s = text.starts_with('-') ? -1 : parse_duration_s(text, "--timeout");
  if (s <= 0)
    throw UsageError(fmt::format("--timeout '{}': the deadline must be positive, e.g. 30s", text));
  return std::chrono::milliseconds(static_cast<int64_t>(std::ceil(s * 1000)));
}

// ---------------------------------------------------------------------------------------
// [cluster]
// ---------------------------------------------------------------------------------------

// The link flags given, over what the scenario or the defaults said.
void apply_link_flags(const RunFlags& f, NetworkConfig& n) {
  if (!f.topology.empty()) {
    try {
      set_topology(n, f.topology);
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("--topology: {}", e.what()));
    }
  }
  if (!f.latency.empty()) n.link.latency_s = parse_duration_s(f.latency, "--latency");
  if (!f.bandwidth.empty()) n.link.bandwidth_Bps = parse_bandwidth_Bps(f.bandwidth, "--bandwidth");
  if (!f.jitter.empty()) n.link.jitter_s = parse_duration_s(f.jitter, "--jitter");
  if (!f.loss.empty()) n.link.loss = parse_loss(f.loss);
}

ClusterOptions build_cluster(const RunFlags& f, const ClusterOptions& defaults, Backend backend) {
  ClusterOptions c = defaults;
  if (!f.timeout.empty()) c.timeout = parse_timeout(f.timeout);
  if (backend == Backend::mpi) {
    check_mpi_flags(f);
    c.nodes = f.nodes == -1 ? 0 : f.nodes;  // 0: as many as mpirun starts
    return c;
  }
  std::optional<int> scenario_nodes;
  if (!f.scenario.empty()) {
    const Scenario s = load_scenario(f.scenario);
    apply(s, c);
    scenario_nodes = s.nodes;
  }
  for (const auto& text : f.stragglers)
    add_straggler(c, text);
  for (const auto& text : f.crashes)
    add_crash(c, text);
  apply_link_flags(f, c.network);
  if (!f.eager_limit.empty()) {
    const uint64_t bytes = parse_size_bytes(f.eager_limit, "--eager-limit");
    c.node.eager_bytes = bytes;
    for (auto& [rank, node] : c.node_overrides)
      node.eager_bytes = bytes;
  }
  if (f.gflops != -1) {
    if (!(f.gflops >= 1e-3 && f.gflops <= 1e9))
      throw UsageError(fmt::format("--gflops {}: use 0.001 to 1e9 GFLOP/s", f.gflops));
    c.node.gflops = f.gflops;
    for (auto& [rank, node] : c.node_overrides)
      node.gflops = f.gflops;
  }
  if (f.nodes != -1) c.nodes = f.nodes;
  const int most = backend == Backend::simgrid ? kMaxSimgridRanks : kMaxNodes;
  if (c.nodes < 1 || c.nodes > most)
    throw UsageError(
        fmt::format("--nodes {}: use 1 to {} {}", c.nodes, most,
                    backend == Backend::simgrid ? "SimGrid ranks" : "simulated nodes"));
  check_ranks(c);
  return c;
}

// ---------------------------------------------------------------------------------------
// [run]
// ---------------------------------------------------------------------------------------

void read_allreduce(const std::string& text, const std::string& device, RunSpec& s) {
  s.nccl = text == "nccl";
  if (s.nccl) {
    if (device == "cpu")
      throw UsageError(
          "--allreduce nccl sums the gradients on GPUs: add --device cuda, or use --allreduce " +
          algorithm_names(", ", " or "));
    s.allreduce = Algorithm::automatic;
    return;
  }
  try {
    s.allreduce = parse_algorithm(text);
  } catch (const UsageError&) {
    throw UsageError(fmt::format("unknown algorithm '{}': use {}, or nccl with --device cuda", text,
                                 algorithm_names(", ", ", ")));
  }
}

}  // namespace

void check_bucket_flags(double mb, double first_mb) {
  if (!(mb >= 0) || mb > 1e6)
    throw UsageError(fmt::format(
        "--bucket-mb {}: give a bucket cap from 0 (one all_reduce) to 1e6 MB; PyTorch's DDP "
        "uses 25",
        mb));
  if (first_mb != -1 && mb == 0)
    throw UsageError(fmt::format(
        "--first-bucket-mb {} is given but without --bucket-mb there are no buckets: add "
        "--bucket-mb MB, or drop --first-bucket-mb",
        first_mb));
  if (first_mb != -1 && (!(first_mb > 0) || first_mb > 1e6))
    throw UsageError(
        fmt::format("--first-bucket-mb {}: give the first bucket's cap, above 0 and up to 1e6 MB; "
                    "PyTorch's DDP uses 1",
                    first_mb));
}

namespace {

void read_buckets(double mb, double first_mb, const std::string& device, RunSpec& s) {
  check_bucket_flags(mb, first_mb);
  if (first_mb == -1) first_mb = s.first_bucket_mb;  // the command's default
  if (mb > 0 && device != "cpu")
    throw UsageError(fmt::format(
        "--bucket-mb {} runs on --device cpu only: the CUDA device computes backward in one "
        "piece, so no bucket could start early; drop --bucket-mb or use --device cpu",
        mb));
  s.bucket_mb = mb;
  s.first_bucket_mb = first_mb;
}

void read_local_sgd(const RunFlags& f, RunSpec& s) {
  if (f.local_sgd_start != -1 && f.local_sgd == 0)
    throw UsageError(fmt::format(
        "--local-sgd-start {} is given but without --local-sgd H nothing steps locally: add "
        "--local-sgd H, or drop --local-sgd-start",
        f.local_sgd_start));
  if (f.local_sgd > 0 && (f.checkpoint.every > 0 || f.checkpoint.resume))
    throw UsageError(fmt::format(
        "--local-sgd {} keeps a model and momentum per rank between averages, which a "
        "checkpoint (rank 0's) cannot hold: drop --checkpoint-every and --resume, or train "
        "without --local-sgd",
        f.local_sgd));
  s.local_sgd = f.local_sgd;
  s.local_sgd_start = f.local_sgd_start == -1 ? 0 : f.local_sgd_start;
}

void read_compress(const RunFlags& f, RunSpec& s) {
  const CompressSpec spec = CompressSpec::parse(f.compress.empty() ? "none" : f.compress);
  if (f.powersgd_start != -1 && spec.kind != CompressSpec::Kind::powersgd)
    throw UsageError(fmt::format(
        "--powersgd-start {} is given but the gradients are not compressed with PowerSGD: add "
        "--compress powersgd:R, or drop --powersgd-start",
        f.powersgd_start));
  if (spec.kind == CompressSpec::Kind::none) return;
  if (f.device != "cpu")
    throw UsageError(fmt::format(
        "--compress {} runs on --device cpu only: the GPUs sum their gradients in one piece; "
        "drop --compress or use --device cpu",
        f.compress));
  if (f.checkpoint.every > 0 || f.checkpoint.resume)
    throw UsageError(fmt::format(
        "--compress {}: a checkpoint holds neither the hook nor its per-rank state (error "
        "feedback, PowerSGD's Q); drop --checkpoint-every and --resume, or train without "
        "--compress",
        f.compress));
  s.compress = spec.str();
  if (f.powersgd_start != -1) s.powersgd_start = f.powersgd_start;
}

// Asynchronous SGD with parameter servers: alone, on the CPU (the world size is checked
// where it is known: here for simulated nodes, at the start on MPI ranks).
void read_parameter_servers(const RunFlags& f, RunSpec& s) {
  if (f.max_staleness != -1 && f.parameter_servers == 0)
    throw UsageError(
        fmt::format("--max-staleness {} is given but no rank is a parameter server: add "
                    "--parameter-servers S, or drop --max-staleness",
                    f.max_staleness));
  if (f.parameter_servers == 0) return;
  const auto refuse = [&](const std::string& other, const std::string& why) {
    throw UsageError(fmt::format("--parameter-servers {} and {}: {}; use one of them",
                                 f.parameter_servers, other, why));
  };
  if (!f.compress.empty() && f.compress != "none")
    refuse("--compress " + f.compress, "the workers push whole gradients to the servers");
  if (f.local_sgd > 0)
    refuse(fmt::format("--local-sgd {}", f.local_sgd), "local SGD averages over all ranks");
  if (f.bucket_mb > 0)
    refuse(fmt::format("--bucket-mb {:g}", f.bucket_mb), "no gradient is all-reduced");
  if (f.device != "cpu") refuse("--device " + f.device, "the servers' shards live on the CPU");
  if (f.allreduce == "nccl") refuse("--allreduce nccl", "no gradient is all-reduced");
  if (f.checkpoint.every > 0 || f.checkpoint.resume)
    refuse("checkpoints", "a checkpoint holds no server's shard or the workers' progress");
  s.parameter_servers = f.parameter_servers;
  s.max_staleness = f.max_staleness;
}

// cpu, cuda (each rank its local rank's GPU) or cuda:K; whether this build and machine
// have it is the device factory's to say.
void check_device(const std::string& device) {
  if (device == "cpu" || device == "cuda") return;
  const std::string digits = device.starts_with("cuda:") ? device.substr(5) : "";
  if (!digits.empty() && digits.size() <= 4 &&
      digits.find_first_not_of("0123456789") == std::string::npos)
    return;
  throw UsageError(
      fmt::format("--device {}: use --device cpu, --device cuda (each rank its local rank's "
                  "GPU) or --device cuda:K",
                  device));
}

void read_training(const RunFlags& f, RunSpec& s) {
  s.backend = parse_backend(f.backend);
  s.phantom = f.payload == "phantom";
  s.measured_compute = f.compute == "measured";
  s.lv08 = f.network_model == "lv08";
  if (s.measured_compute && f.gflops != -1)
    throw UsageError(fmt::format(
        "--gflops {} does nothing with --compute measured (compute takes the CPU time it took): "
        "drop one of the two",
        f.gflops));
  if (s.lv08 && s.backend != Backend::simgrid)
    throw UsageError(fmt::format(
        "--network-model lv08 is SimGrid's (the {} backend has dsgd's alpha-beta links): add "
        "--backend simgrid, or drop --network-model",
        to_string(s.backend)));
  if (s.measured_compute && s.backend != Backend::simgrid)
    throw UsageError(fmt::format(
        "--compute measured runs on --backend simgrid only (the {} backend counts compute as "
        "flops at --gflops): add --backend simgrid, or drop --compute",
        to_string(s.backend)));
  if (s.phantom && s.backend != Backend::simgrid)
    throw UsageError(fmt::format(
        "--payload phantom runs on --backend simgrid only (the {} backend moves real bytes): "
        "add --backend simgrid, or drop --payload",
        to_string(s.backend)));
  if (ModelSpec::parse(f.model).kind == ModelSpec::Kind::cnn && f.device != "cpu")
    throw UsageError(fmt::format(
        "--model {} runs on --device cpu only: the CUDA device builds MLPs; drop --device or "
        "use --model mlp:H",
        f.model));
  s.model = f.model;
  s.data = f.data;
  s.init = f.init;
  s.batch = f.batch;
  if (!(f.lr > 0) || !std::isfinite(f.lr))
    throw UsageError(fmt::format("--lr {}: the learning rate must be a positive number", f.lr));
  s.sgd.lr = static_cast<float>(f.lr);
  s.sgd.momentum = static_cast<float>(f.momentum);
  s.sgd.weight_decay = static_cast<float>(f.weight_decay);
  s.sgd.nesterov = f.nesterov;
  if (f.steps > 0 && f.epochs > 0) throw UsageError("give --steps or --epochs, not both");
  if (f.steps > 0) s.steps = f.steps, s.epochs = 0;
  if (f.epochs > 0) s.steps = 0, s.epochs = f.epochs;
  s.seed = f.seed;
  s.shuffle = !f.no_shuffle;
  s.eval_every = f.eval_every;
  check_device(f.device);
  s.device = f.device;
  read_allreduce(f.allreduce, f.device, s);
  read_buckets(f.bucket_mb, f.first_bucket_mb, f.device, s);
  read_local_sgd(f, s);
  read_compress(f, s);
  read_parameter_servers(f, s);
}

// The files a run reads, with the flag that names them: the data spec's files (csv:, idx:),
// --init, --scenario and --resume PATH.
std::vector<std::pair<const char*, std::string>> input_files(const RunFlags& f) {
  std::vector<std::pair<const char*, std::string>> in;
  for (const char* kind : {"csv:", "idx:"}) {
    if (!f.data.starts_with(kind)) continue;
    std::string rest = f.data.substr(4);
    for (size_t at = 0; at <= rest.size();) {
      const size_t comma = std::min(rest.find(',', at), rest.size());
      if (comma > at) in.push_back({"--data", rest.substr(at, comma - at)});
      at = comma + 1;
    }
  }
  for (const auto& [flag, path] : {std::pair<const char*, std::string>{"--init", f.init},
                                   {"--scenario", f.scenario},
                                   {"--resume", f.checkpoint.resume_path}})
    if (!path.empty()) in.push_back({flag, path});
  return in;
}

// Two outputs on one file, or an output onto an input, would lose data: refused before any
// training. Devices and pipes (/dev/null twice) are written in place and may repeat.
void check_distinct_files(const RunFlags& f) {
  namespace fs = std::filesystem;
  auto same = [](const std::string& a, const std::string& b) {
    std::error_code ec;
    if (fs::exists(a, ec) && !fs::is_regular_file(a, ec)) return false;
    return fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec);
  };
  const std::pair<const char*, std::string> outputs[] = {
      {"--save", f.save}, {"--metrics", f.metrics}, {"--trace", f.trace}};
  for (size_t i = 0; i < std::size(outputs); ++i) {
    const auto& [flag, path] = outputs[i];
    if (path.empty()) continue;
    for (size_t j = i + 1; j < std::size(outputs); ++j)
      if (!outputs[j].second.empty() && same(path, outputs[j].second))
        throw UsageError(fmt::format("{} {} is also {}: give each output a file of its own", flag,
                                     path, outputs[j].first));
    for (const auto& [in_flag, in_path] : input_files(f))
      if (same(path, in_path))
        throw UsageError(fmt::format("{} {} would overwrite the {} file; choose another file", flag,
                                     path, in_flag));
  }
}

// --elastic: simulated nodes (MPI ranks: restart only, a job started again by an agent), a
// training mode whose state survivors can hold, and (restart) checkpoints to start again from.
void read_elastic(const RunFlags& f, RunSpec& s) {
  if (f.max_restarts != -1 && f.elastic.empty())
    throw UsageError(fmt::format(
        "--max-restarts {} is given but without --elastic POLICY no run goes on after a crash: "
        "add --elastic restart or --elastic in-process, or drop --max-restarts",
        f.max_restarts));
  const ElasticPolicy policy =
      f.elastic.empty() ? ElasticPolicy::none : parse_elastic_policy(f.elastic);
  if (f.max_restarts != -1 && policy == ElasticPolicy::none)
    throw UsageError(fmt::format(
        "--max-restarts {} is given but with --elastic none no run goes on after a crash: use "
        "--elastic restart or --elastic in-process, or drop --max-restarts",
        f.max_restarts));
  if (policy == ElasticPolicy::none) return;
  const auto refuse = [&](const std::string& other, const std::string& why) {
    throw UsageError(fmt::format("--elastic {} and {}: {}", f.elastic, other, why));
  };
  if (s.backend == Backend::mpi && policy == ElasticPolicy::in_process)
    refuse("--backend mpi",
           "Open MPI ends the whole job when a rank dies, so no survivor is left to go on; use "
           "--elastic restart under scripts/mpirun-elastic (it starts the job again with a rank "
           "fewer), or --backend sim");
  if (s.parameter_servers > 0)
    refuse(fmt::format("--parameter-servers {}", s.parameter_servers),
           "a server's shard of the parameters dies with it; use one of them");
  if (s.local_sgd > 0)
    refuse(fmt::format("--local-sgd {}", s.local_sgd),
           "each rank's own model between averages dies with it; use one of them");
  if (!s.compress.empty() && !s.compress.starts_with("fp16") && !s.compress.starts_with("bf16"))
    refuse("--compress " + s.compress,
           "the hook's per-rank state (error feedback) is not carried over; use fp16, bf16 or "
           "no --compress");
  if (policy == ElasticPolicy::restart && f.checkpoint.every == 0)
    refuse("no --checkpoint-every",
           "a restart starts again from the newest checkpoint; add --checkpoint-every K "
           "--checkpoint-dir DIR");
  s.elastic = {.policy = policy,
               .max_restarts = f.max_restarts == -1 ? s.elastic.max_restarts : f.max_restarts};
}

void read_outputs(const RunFlags& f, RunSpec& s) {
  check_output_path(f.save, "--save");
  check_output_path(f.metrics, "--metrics");
  check_output_path(f.trace, "--trace");
  check_distinct_files(f);
  check_checkpoint_flags(f.checkpoint);
  if (f.trace_groups >= 0 && f.trace.empty())
    throw UsageError(
        fmt::format("--trace-groups {} without --trace: add --trace FILE, or drop --trace-groups",
                    f.trace_groups));
  if (f.trace_groups > 0 && s.backend == Backend::mpi)
    throw UsageError(fmt::format(
        "--trace-groups {} with --backend mpi: each rank writes its own file; join them with "
        "`dsgd trace merge` and group the result with `dsgd trace summarize`",
        f.trace_groups));
  const char* monitor_env = std::getenv("DSGD_MONITOR");
  if (!f.monitor.empty())
    split_monitor_endpoint(f.monitor);  // refused before any output
  else if (monitor_env)
    split_monitor_endpoint(monitor_env);
  s.outputs = {.save = f.save,
               .metrics = f.metrics,
               .trace = f.trace,
               .trace_groups = f.trace_groups,
               .monitor = !f.monitor.empty() ? f.monitor
                          : monitor_env      ? monitor_env
                                             : "",
               .checkpoint = f.checkpoint};
}

}  // namespace

RunSpec build_run_spec(const RunFlags& f, const RunSpec& defaults) {
  RunSpec s = defaults;
  read_training(f, s);
  s.cluster = build_cluster(f, defaults.cluster, s.backend);
  if (s.backend != Backend::mpi && s.parameter_servers >= s.cluster.nodes)
    throw UsageError(fmt::format(
        "--parameter-servers {} of {} nodes leaves no worker: use 1 to {} servers, or more "
        "--nodes",
        s.parameter_servers, s.cluster.nodes, s.cluster.nodes - 1));
  s.scenario = f.scenario.empty() ? defaults.scenario : f.scenario;
  read_elastic(f, s);
  read_outputs(f, s);
  if (s.backend == Backend::simgrid) check_simgrid(s);
  const Topology topology = s.cluster.network.topology;
  if (is_cluster_topology(topology) && s.backend != Backend::simgrid)
    throw UsageError(fmt::format(
        "--topology {} is built by SimGrid only (the {} backend models mesh, switch and racks): "
        "add --backend simgrid, or use --topology switch",
        to_string(topology), to_string(s.backend)));
  return s;
}

}  // namespace dsgd::sim
