// Sections: flags | checks | run (rendezvous, mesh, training, outputs)
// Clocks: ranks on one machine share CLOCK_MONOTONIC, so with rank 0's epoch their network
// clocks agree and frames carry absolute arrival times, as between threads. Machines' clocks
// differ: when a rank runs elsewhere (its boot id differs from rank 0's), every node stamps
// frames with the link delay instead and the receiver counts it from the bytes' arrival.
#include "cli/node_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "cli/backend.h"
#include "cli/progress.h"
#include "cli/summary.h"
#include "cli/train_command.h"
#include "core/errors.h"
#include "core/io/metrics.h"
#include "core/io/npz.h"
#include "core/io/trace.h"
#include "core/nn/blas.h"
#include "sim/cluster.h"
#include "sim/net_clock.h"
#include "sim/network.h"
#include "sim/node.h"
#include "sim/rendezvous.h"

namespace dsgd::cli {

namespace asio = boost::asio;
using asio::ip::tcp;

void add_node_command(CLI::App& app, NodeFlags& f) {
  CLI::App* n = app.add_subcommand(
      "node", "Run one simulated node as its own process; rank 0 hosts the rendezvous");
  n->add_option("--rank", f.rank, "This node's rank, 0..WORLD-1")->required();
  n->add_option("--world", f.world, "Number of nodes in the run (1-256)")->required();
  n->add_option("--rendezvous", f.rendezvous,
                "HOST:PORT where rank 0 listens for the others (an IPv4 address)")
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
  add_train_options(
      *n, f.train,
      sim::kBackendFlag | sim::kTrainingFlags | sim::kClusterFlags | sim::kOutputFlags);
}

namespace {

// ---------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------

struct NodePlan {
  sim::RunSpec spec;
  tcp::endpoint rendezvous;
  asio::ip::address listen;  // where this node (and rank 0's rendezvous) accepts
};

NodePlan check_flags(const NodeFlags& f) {
  if (f.world < 1 || f.world > sim::kMaxNodes)
    throw UsageError(fmt::format("--world {}: use 1 to {} nodes", f.world, sim::kMaxNodes));
  if (f.rank < 0 || f.rank >= f.world)
    throw UsageError(
        fmt::format("--rank {}: give 0 to {} (--world {})", f.rank, f.world - 1, f.world));
  if (f.token.empty() || f.token.size() > sim::kMaxTokenBytes)
    throw UsageError(
        fmt::format("--token: give 1 to {} bytes, the same on every node", sim::kMaxTokenBytes));
  if (f.train.run.backend != "sim")
    throw UsageError("--backend mpi: dsgd node runs a simulated node; use mpirun dsgd train");
  if (f.train.run.nodes != -1 && f.train.run.nodes != f.world)
    throw UsageError(
        fmt::format("--nodes {} but --world {}: drop --nodes", f.train.run.nodes, f.world));
  sim::RunFlags run = f.train.run;
  run.nodes = f.world;
  NodePlan plan{.spec = sim::build_run_spec(run, sim::RunSpec{})};
  const sim::Topology topology = plan.spec.cluster.network.topology;
  if (topology != sim::Topology::mesh)
    throw UsageError(fmt::format(
        "--topology {}: dsgd node models mesh links only (each process computes the delays "
        "of its own links, so links shared between processes cannot be modelled); use "
        "dsgd train --nodes {} for it",
        sim::to_string(topology), f.world));
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
    boost::system::error_code ec;
    plan.listen = asio::ip::make_address_v4(f.listen == "localhost" ? "127.0.0.1" : f.listen, ec);
    if (ec)
      throw UsageError(fmt::format(
          "--listen '{}': give an IPv4 address, e.g. 0.0.0.0 (every interface)", f.listen));
  }
  return plan;
}

// ---------------------------------------------------------------------------------------
// Run
// ---------------------------------------------------------------------------------------

}  // namespace

int run_node(const NodeFlags& f) {
  const Clock::time_point start = Clock::now();
  const NodePlan plan = check_flags(f);
  const sim::RunSpec& spec = plan.spec;
  const sim::ClusterOptions& options = spec.cluster;
  const sim::Outputs& outputs = spec.outputs;
  set_blas_threads(1);  // as in dsgd train, so results match it to the last bit
  const TrainInputs inputs = load_inputs(spec);  // bad flags fail before joining
  const Clock::time_point deadline = Clock::now() + options.timeout;
  const std::string who = fmt::format("rank {}", f.rank);

  // --- rendezvous, part 1: the run's epoch -----------------------------------------------
  std::optional<sim::RendezvousServer> server;
  std::optional<sim::RendezvousClient> client;
  int64_t epoch_ns = 0;
  bool same_host_as_rank0 = true;
  if (f.rank == 0) {
    // Rank 0 accepts on --listen's address (loopback by default) at the rendezvous port.
    server.emplace(tcp::endpoint(plan.listen, plan.rendezvous.port()), f.world, f.token,
                   inputs.fingerprint);
    epoch_ns = server->epoch_ns();
  } else {
    client.emplace(plan.rendezvous, f.rank, f.world, f.token, inputs.fingerprint);
    const sim::Hello rank0 = client->join(deadline);
    epoch_ns = rank0.epoch_ns;
    same_host_as_rank0 = rank0.host_id != 0 && rank0.host_id == sim::host_id();
  }
  const Clock::time_point epoch{
      std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(epoch_ns))};
  std::optional<sim::NetClock> clock;
  if (same_host_as_rank0 && f.clock != "local")
    clock.emplace(epoch);  // one CLOCK_MONOTONIC: every node's network time agrees
  else
    clock.emplace();  // this machine's own; frames will carry delays, not times

  // --- this node ---------------------------------------------------------------------------
  sim::Network network(options.network, f.world);
  sim::NodeOptions node_options = options.node_of(f.rank);
  node_options.listen_address = plan.listen.to_string();
  sim::SimNode node(f.rank, f.world, node_options, network, *clock);
  node.set_timeout(options.timeout);
  node.set_epoch(same_host_as_rank0 ? epoch : Clock::now());
  node.set_job({.token = f.token, .epoch_ns = epoch_ns, .run_hash = inputs.fingerprint});
  fmt::print(stderr, "dsgd node: rank {} of {} accepts peers on {}:{}\n", f.rank, f.world,
             plan.listen.to_string(), node.port());
  std::fflush(stderr);
  // This file holds this rank's events only: the world and the run come from here.
  ChromeTraceWriter trace({.run_json = sim::run_spec_json(spec), .world = f.world});
  if (!outputs.trace.empty()) node.set_events(&trace);
  auto write_trace = [&] {
    if (!outputs.trace.empty() && trace.size() > 0)
      trace.write(per_rank_path(outputs.trace, f.rank));
  };

  // --- rendezvous, part 2: the table ---------------------------------------------------
  sim::RendezvousTable table;
  if (f.rank == 0) {
    // Others reach rank 0 where they reached the rendezvous, unless it listens on one address.
    const std::string host = plan.listen.is_unspecified() ? plan.rendezvous.address().to_string()
                                                          : plan.listen.to_string();
    table = server->serve({.host = host, .port = node.port()}, deadline);
    server.reset();  // the rendezvous port is free again
  } else {
    // A little longer than rank 0 waits, so that its word on who is missing arrives first.
    table = client->finish(node.port(), deadline + std::chrono::seconds(2));
    client.reset();
  }
  if (f.clock == "shared" && !table.one_host)
    throw UsageError(
        "--clock shared: the ranks run on several machines, whose clocks differ; "
        "use --clock auto");
  node.set_shared_clock(f.clock == "shared" || (f.clock == "auto" && table.one_host));

  // --- mesh: the higher rank connects to the lower, as in one process ---------------------
  for (int p = 0; p < f.rank; ++p)
    node.connect(p, table.peers[p].port, table.peers[p].host);
  for (int p = f.rank + 1; p < f.world; ++p)
    node.accept_one();
  node.start();

  // --- training ------------------------------------------------------------------------
  std::unique_ptr<MetricsWriter> metrics;
  if (f.rank == 0 && !outputs.metrics.empty())
    metrics = std::make_unique<MetricsWriter>(outputs.metrics);
  Progress progress(total_steps(inputs.config, inputs.data), f.train.quiet || f.rank != 0);
  TrainHooks hooks;
  if (f.rank == 0)
    hooks.on_step = [&](const StepMetrics& m) {
      if (metrics) metrics->write(m);
      progress.update(m);
    };
  TrainResult result;
  try {
    result = run_training_on(node, inputs, hooks);
    node.flush(Clock::now() + options.timeout);
  } catch (const sim::NodeCrashed&) {
    progress.finish();
    node.crash();  // the others see the connections drop, as with a killed process
    write_trace();
    throw CommError(fmt::format("{} crashed (a --crash fault)", who), f.rank);
  } catch (...) {
    progress.finish();
    write_trace();
    throw;
  }
  progress.finish();
  node.close();
  write_trace();
  if (f.rank != 0) return kExitOk;
  if (!outputs.save.empty()) write_npz(outputs.save, result.params);
  if (metrics) metrics->commit();
  print_summary({.what = fmt::format("dsgd node: rank 0 of {} processes", f.world),
                 .spec = spec,
                 .data = inputs.data,
                 .result = result,
                 .total_s = std::chrono::duration<double>(Clock::now() - start).count(),
                 .trace = outputs.trace.empty()
                              ? ""
                              : fmt::format("{} (one file per rank: join them with dsgd trace "
                                            "merge)",
                                            per_rank_path(outputs.trace, 0))});
  return kExitOk;
}

}  // namespace dsgd::cli
