// `dsgd node`: flags, their checks, and rank 0's outputs; the node's set-up (rendezvous,
// clocks, mesh) is sim/node_process.h.
#include "cli/node_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "cli/backend.h"
#include "cli/classroom_student.h"
#include "cli/progress.h"
#include "cli/rank_zero.h"
#include "cli/summary.h"
#include "cli/train_command.h"
#include "core/errors.h"
#include "core/io/metrics.h"
#include "core/io/npz.h"
#include "core/io/trace.h"
#include "sim/monitor_sink.h"
#include "core/nn/blas.h"
#include "sim/checkpoint_plan.h"
#include "sim/cluster.h"
#include "sim/node_process.h"
#include "sim/rendezvous.h"

namespace dsgd::cli {

namespace asio = boost::asio;
using asio::ip::tcp;

void add_node_command(CLI::App& app, NodeFlags& f) {
  CLI::App* n = app.add_subcommand(
      "node",
      "Run one simulated node as its own process; rank 0 hosts the rendezvous (or, "
      "without --rank and --world, join the classroom of a teacher's dsgd-gui --classroom)");
  n->add_option("--rank", f.rank, "This node's rank, 0..WORLD-1");
  n->add_flag("--join", f.join,
              "Instead of --rank: join an --elastic run under way; rank 0 lets this node in "
              "as a step begins and numbers it after every node so far");
  n->add_option("--world", f.world,
                "Number of nodes in the run (1-256); without --rank and --world this node "
                "joins the classroom at --rendezvous");
  n->add_option("--name", f.name,
                "What an observer (--monitor, dsgd-gui --watch) calls this node, e.g. a "
                "student's name (default: the host's name)");
  n->add_option("--rendezvous", f.rendezvous,
                "HOST:PORT where rank 0 listens for the others, or where the teacher's "
                "dsgd-gui --classroom does (an IPv4 address)")
      ->required();
  n->add_option("--token", f.token,
                "Job token every node must present (DSGD_TOKEN keeps it out of ps)")
      ->envname("DSGD_TOKEN")
      ->required();
  n->add_option("--listen", f.listen,
                "Address to accept peers on; default 127.0.0.1 only, 0.0.0.0 for a LAN");
  n->add_option("--clock", f.clock,
                "auto: share the network clock when every rank runs on one machine; local: "
                "count link delays from each message's arrival, as across machines")
      ->check(CLI::IsMember({"auto", "shared", "local"}))
      ->capture_default_str();
  add_train_options(*n, f.train,
                    sim::kBackendFlag | sim::kTrainingFlags | sim::kClusterFlags |
                        sim::kOutputFlags | sim::kCheckpointFlags | sim::kElasticFlags);
}

namespace {

struct NodePlan {
  sim::RunSpec spec;
  tcp::endpoint rendezvous;
  asio::ip::address listen;  // where this node (and rank 0's rendezvous) accepts
};

// Rank 0 writes the checkpoints; a node does not resume from one (dsgd train --resume does),
// and an elastic run cannot lose rank 0, whose process hosts the rendezvous.
void check_node_checkpoints(const sim::RunSpec& spec, int world) {
  if (spec.outputs.checkpoint.resume)
    throw UsageError(fmt::format(
        "--resume: dsgd node writes checkpoints (rank 0 does) but does not resume from them; "
        "resume with dsgd train --resume --nodes {} and the same flags",
        world));
  if (spec.elastic.policy == sim::ElasticPolicy::none) return;
  const auto& overrides = spec.cluster.node_overrides;
  const auto rank0 = overrides.find(0);
  if (rank0 == overrides.end()) return;
  const sim::NodeOptions& o = rank0->second;
  if (!o.crash_at_step && !o.crash_at_s) return;
  throw UsageError(fmt::format(
      "--crash 0@{}: rank 0's process hosts the rendezvous where the survivors of an "
      "--elastic {} run meet, so the run cannot go on without it; crash another rank",
      o.crash_at_step ? fmt::format("{}", *o.crash_at_step) : fmt::format("{}s", *o.crash_at_s),
      sim::to_string(spec.elastic.policy)));
}

}  // namespace

void check_node_identity(const NodeFlags& f) {
  if (f.name.size() > 32 || std::any_of(f.name.begin(), f.name.end(),
                                        [](unsigned char c) { return c < 0x20 || c == 0x7f; }))
    throw UsageError(fmt::format("--name: give at most 32 bytes of printable text, e.g. alice"));
  if (f.token.empty() || f.token.size() > sim::kMaxTokenBytes)
    throw UsageError(
        fmt::format("--token: give 1 to {} bytes, the same on every node", sim::kMaxTokenBytes));
}

boost::asio::ip::address listen_address(const std::string& listen) {
  boost::system::error_code ec;
  const auto address =
      boost::asio::ip::make_address_v4(listen == "localhost" ? "127.0.0.1" : listen, ec);
  if (ec)
    throw UsageError(
        fmt::format("--listen '{}': give an IPv4 address, e.g. 0.0.0.0 (every interface)", listen));
  return address;
}

namespace {

NodePlan check_flags(const NodeFlags& f) {
  if (f.world == 0)
    throw UsageError(
        "--world is required with --rank (leave out both to join a teacher's classroom at "
        "--rendezvous)");
  if (f.world < 1 || f.world > sim::kMaxNodes)
    throw UsageError(fmt::format("--world {}: use 1 to {} nodes", f.world, sim::kMaxNodes));
  if (f.join && f.rank != -1)
    throw UsageError(fmt::format(
        "--join and --rank {}: a node that joins is numbered by rank 0; drop --rank", f.rank));
  if (!f.join && f.rank == -1)
    throw UsageError(
        "--rank is required: give this node's rank, or --join to join an "
        "--elastic run under way");
  if (!f.join && (f.rank < 0 || f.rank >= f.world))
    throw UsageError(
        fmt::format("--rank {}: give 0 to {} (--world {})", f.rank, f.world - 1, f.world));
  check_node_identity(f);
  if (f.train.run.backend != "sim")
    throw UsageError(fmt::format(
        "--backend {}: dsgd node runs a simulated node; use mpirun dsgd train for MPI ranks, "
        "dsgd train --backend simgrid for SimGrid's",
        f.train.run.backend));
  if (f.train.run.nodes != -1 && f.train.run.nodes != f.world)
    throw UsageError(
        fmt::format("--nodes {} but --world {}: drop --nodes", f.train.run.nodes, f.world));
  sim::RunFlags run = f.train.run;
  run.nodes = f.world;
  NodePlan plan{.spec = f.given_run ? *f.given_run : sim::build_run_spec(run, sim::RunSpec{})};
  const sim::Topology topology = plan.spec.cluster.network.topology;
  if (topology != sim::Topology::mesh)
    throw UsageError(fmt::format(
        "--topology {}: dsgd node models mesh links only (each process computes the delays "
        "of its own links, so links shared between processes cannot be modelled); use "
        "dsgd train --nodes {} for it",
        sim::to_string(topology), f.world));
  check_node_checkpoints(plan.spec, f.world);
  if (f.join && plan.spec.elastic.policy == sim::ElasticPolicy::none)
    throw UsageError(
        "--join: only an --elastic run takes a node after it started; give the run's "
        "--elastic policy, as every node has it");
  plan.rendezvous = sim::parse_endpoint(f.rendezvous, "--rendezvous");
  if (f.listen.empty()) {
    // Loopback unless asked: a classroom laptop should not open ports to the LAN by default.
    if (!plan.rendezvous.address().is_loopback())
      throw UsageError(fmt::format(
          "--rendezvous {}: not a loopback address, so nodes on other machines take part; "
          "listening beyond 127.0.0.1 must be asked for: add --listen 0.0.0.0 (or this "
          "machine's address)",
          f.rendezvous));
    plan.listen = asio::ip::make_address("127.0.0.1");
  } else {
    plan.listen = listen_address(f.listen);
  }
  return plan;
}

// What one `dsgd node` holds while its node trains.
struct NodeRun {
  const sim::RunSpec& spec;
  const TrainInputs& inputs;
  sim::CheckpointPlan plan;  // rank 0's; empty on the others
  RankZeroOutputs out;
  RankZeroResult rank0;
  std::vector<sim::MembershipChange> changes;  // rank 0, an elastic run
  std::string monitor_note;                    // the observer's, once its events are sent
};

sim::ClockChoice clock_choice(const std::string& clock) {
  if (clock == "shared") return sim::ClockChoice::shared;
  if (clock == "local") return sim::ClockChoice::local;
  return sim::ClockChoice::automatic;
}

// Rank 0's summary of the run.
void print_node_summary(const NodeFlags& f, const sim::RunSpec& spec, const TrainInputs& inputs,
                        const TrainResult& result, const NodeRun& run, Clock::time_point start) {
  const sim::Outputs& outputs = spec.outputs;
  RunReport report{
      .what =
          fmt::format("dsgd node: rank 0 of {} processes{}", f.world,
                      result.world != f.world ? fmt::format(", {} at the end", result.world) : ""),
      .spec = spec,
      .data = inputs.data,
      .result = result,
      .total_s = std::chrono::duration<double>(Clock::now() - start).count(),
      .trace = outputs.trace.empty()
                   ? ""
                   : fmt::format("{} (one file per rank: join them with dsgd trace merge)",
                                 per_rank_path(outputs.trace, 0)),
      .monitor = run.monitor_note,
      .membership = sim::describe_changes(run.changes, spec.elastic.policy)};
  if (!run.out.last_checkpoint.empty())
    report.checkpoints =
        fmt::format("{} (newest {} kept)", run.out.last_checkpoint, outputs.checkpoint.keep);
  print_summary(report);
}

// Trains this process's node: once, or round after round of an elastic run. Rank 0's
// metrics file is opened once the mesh is up, so a failed rendezvous leaves none.
void train_node(const NodeFlags& f, const sim::NodeProcessOptions& process,
                const sim::ClusterOptions& options, NodeRun& run) {
  const sim::RunSpec& spec = run.spec;
  auto open_metrics = [&](const Communicator& comm) {
    if (comm.rank() == 0 && !spec.outputs.metrics.empty() && !run.out.metrics)
      run.out.metrics = std::make_unique<MetricsWriter>(spec.outputs.metrics);
  };
  if (spec.elastic.policy == sim::ElasticPolicy::none) {
    sim::run_node_process(process, options, [&](Communicator& comm) {
      open_metrics(comm);
      TrainResult r =
          run_training_on(comm, run.inputs, rank_zero_hooks(comm, spec, run.plan, run.out));
      if (comm.rank() == 0) run.rank0.result = std::move(r), run.rank0.finished = true;
    });
    return;
  }
  const Clock::time_point t0 = Clock::now();
  run.changes = sim::run_elastic_node_process(
      process, options, spec.elastic,
      [&](Communicator& comm, const sim::ElasticRound& round) {
        open_metrics(comm);
        train_round(comm, round, run.inputs, spec, run.plan, run.out, run.rank0);
      },
      [&] { return sim::newest_state(run.plan, spec.outputs.checkpoint.dir); });
  if (f.rank != 0) return;
  sim::count_every_round(run.rank0.result, run.rank0.steps);
  run.rank0.result.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

int run_node(const NodeFlags& f) {
  if (f.rank == -1 && !f.join && f.world == 0 && !f.given_run) return run_classroom_student(f);
  const Clock::time_point start = Clock::now();
  const NodePlan plan = check_flags(f);
  const sim::RunSpec& spec = plan.spec;
  const sim::Outputs& outputs = spec.outputs;
  set_blas_threads(1);  // as in dsgd train, so results match it to the last bit
  const TrainInputs inputs = load_inputs(spec);  // bad flags fail before joining
  // Rank 0 writes the checkpoints: it alone prepares their directory.
  const bool elastic = spec.elastic.policy != sim::ElasticPolicy::none;
  NodeRun run{.spec = spec,
              .inputs = inputs,
              .plan = f.rank == 0 ? sim::plan_checkpoints(outputs.checkpoint, inputs.config,
                                                          inputs.data, elastic ? 0 : f.world)
                                  : sim::CheckpointPlan{},
              .out = {.progress = Progress(total_steps(inputs.config, inputs.data),
                                           f.train.quiet || f.rank != 0)}};
  // This file holds this rank's events only: the world and the run come from here.
  ChromeTraceWriter trace({.run_json = sim::run_spec_json(spec), .world = f.world});
  sim::ClusterOptions options{spec.cluster};
  EventFanout events;  // this rank's trace, and the observer watching the run
  if (!outputs.trace.empty()) events.add(&trace);
  sim::RunSpec described = spec;
  described.cluster.nodes = f.world;
  const std::unique_ptr<sim::MonitorSink> monitor = sim::make_monitor(described, f.name, f.token);
  events.add(monitor.get());
  if (!events.empty()) options.events = &events;
  int node = f.rank;  // a node that joins learns its number from rank 0
  auto write_trace = [&] {
    if (!outputs.trace.empty() && trace.size() > 0) trace.write(per_rank_path(outputs.trace, node));
  };
  const sim::NodeProcessOptions process{
      .rank = f.join ? sim::kJoinRank : f.rank,
      .rendezvous = plan.rendezvous,
      .listen = plan.listen,
      .token = f.token,
      .run_hash = inputs.fingerprint,
      .clock = clock_choice(f.clock),
      .on_listening =
          [&](uint16_t port) {
            fmt::print(stderr, "dsgd node: rank {} of {} accepts peers on {}:{}\n", f.rank, f.world,
                       plan.listen.to_string(), port);
            std::fflush(stderr);
          },
      .on_joined =
          [&](int joined_as, int rank, int world) {
            node = joined_as;
            fmt::print(stderr, "dsgd node: joined as rank {} of {} (node {})\n", rank, world,
                       joined_as);
            std::fflush(stderr);
            if (f.joined) f.joined(joined_as, world);
          }};
  try {
    train_node(f, process, options, run);
  } catch (...) {
    run.out.progress.finish();
    write_trace();
    throw;
  }
  run.out.progress.finish();
  write_trace();
  if (monitor) run.monitor_note = monitor->finish();
  if (f.rank != 0) return kExitOk;
  if (!outputs.save.empty()) write_npz(outputs.save, run.rank0.result.params);
  if (run.out.metrics) run.out.metrics->commit();
  print_node_summary(f, spec, inputs, run.rank0.result, run, start);
  return kExitOk;
}

}  // namespace dsgd::cli
