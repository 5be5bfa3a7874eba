// `dsgd bench workload`: its flags, the workload and plan they describe (checked before any
// rank starts), the steps on every rank, the results gathered to rank 0, and the printing
// (workload_report.h), with a warning for each setting given that changed nothing.
#include "cli/workload_command.h"

#include <CLI/CLI.hpp>
#include <array>
#include <bit>
#include <chrono>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "cli/backend.h"
#include "cli/bench_command.h"
#include "cli/workload_report.h"
#include "core/errors.h"
#include "core/io/atomic_file.h"
#include "core/train/buckets.h"
#include "core/workload/astra_workload.h"
#include "core/workload/model_tables.h"
#include "sim/cluster_shape.h"
#include "sim/link_model.h"

namespace dsgd::cli {

namespace {

// Real payloads hold every rank's gradients: past this, the run asks for phantom ones.
constexpr double kMostRealGiB = 4;

sim::RunSpec workload_defaults() {
  sim::RunSpec d;
  d.cluster.timeout = std::chrono::seconds(600);
  return d;
}

bool given(const WorkloadFlags& f, const char* flag) {
  return f.command && f.command->count(flag) > 0;
}

Workload load_workload(const std::string& name) {
  for (const std::string& builtin : builtin_workload_names())
    if (name == builtin) return builtin_workload(name);
  std::error_code ec;
  if (std::filesystem::exists(name, ec)) return read_astra_workload(name);
  return builtin_workload(name);  // UsageError naming the choices
}

struct Run {
  sim::RunSpec spec;
  WorkloadPlan plan;
};

Run make_run(const WorkloadFlags& f) {
  Run run{.spec = sim::build_run_spec(f.run, workload_defaults())};
  if (run.spec.backend == sim::Backend::mpi)
    throw UsageError(
        "dsgd bench workload models time and needs a model clock: use --backend simgrid (or "
        "sim, for a few nodes)");
  if (run.spec.backend == sim::Backend::simgrid && !given(f, "--payload")) run.spec.phantom = true;
  if (run.spec.measured_compute)
    throw UsageError(
        "--compute measured: dsgd bench workload runs no compute to measure (its times come from "
        "the workload's table or file); drop --compute");
  if (f.batch_per_rank < 1)
    throw UsageError(fmt::format("--batch-per-rank {}: use 1 or more", f.batch_per_rank));
  if (f.steps < 1 || f.steps > 1000)
    throw UsageError(fmt::format("--steps {}: use 1 to 1000", f.steps));
  sim::check_bucket_flags(f.bucket_mb, given(f, "--first-bucket-mb") ? f.first_bucket_mb : -1);
  sim::check_output_path(f.json, "--json");
  Workload workload = load_workload(f.workload);
  std::vector<WorkloadBucket> buckets = workload_buckets(
      workload, bucket_cap_bytes(f.first_bucket_mb), bucket_cap_bytes(f.bucket_mb));
  run.plan = {.workload = std::move(workload),
              .batch = f.batch_per_rank,
              .buckets = std::move(buckets),
              .all_reduce = {.algorithm = parse_algorithm(f.algorithm)}};
  const double real_gib =
      double(run.plan.workload.grad_bytes()) * run.spec.cluster.nodes / double(1 << 30);
  if (!run.spec.phantom && real_gib > kMostRealGiB)
    throw UsageError(
        fmt::format("--payload real: {} ranks would hold {:.1f} GiB of gradients, over {:g}: {}",
                    run.spec.cluster.nodes, real_gib, kMostRealGiB,
                    run.spec.backend == sim::Backend::simgrid
                        ? "use --payload phantom (sizes only, the default on --backend simgrid)"
                        : "use --backend simgrid (phantom payloads by default), or fewer --nodes"));
  return run;
}

std::string header(const Run& run, const WorkloadFlags& f) {
  const sim::ClusterOptions& c = run.spec.cluster;
  const Workload& w = run.plan.workload;
  const bool simgrid = run.spec.backend == sim::Backend::simgrid;
  std::string s =
      fmt::format("dsgd bench workload: {} on {} {} ({}, {} payloads)\n", w.name, c.nodes,
                  simgrid ? "SimGrid ranks" : "simulated nodes",
                  simgrid ? "virtual time" : "model time", run.spec.phantom ? "phantom" : "real");
  s += fmt::format("# model    {:.4g} M parameters in {} layers{}\n", double(w.params()) / 1e6,
                   w.layers.size(),
                   w.uses_flops() ? fmt::format(", {} samples{} per rank", f.batch_per_rank,
                                                w.sample.empty() ? "" : " (" + w.sample + ")")
                                  : "");
  if (!w.source.empty()) s += fmt::format("# source   {}\n", w.source);
  const StepCompute compute =
      step_compute(run.plan, {.flops_per_s = c.node.gflops * 1e9, .slowdown = 1});
  s += fmt::format("# compute  {}forward {:.3f} ms, backward {:.3f} ms, update {:.3f} ms a step\n",
                   w.uses_flops() ? fmt::format("{:g} GFLOP/s a node: ", c.node.gflops) : "",
                   compute.forward_s * 1e3, compute.backward_s * 1e3, compute.update_s * 1e3);
  const bool per_link = sim::is_cluster_topology(c.network.topology);
  s += fmt::format("# network  {}, {}{}, {}{}\n", sim::describe_topology(c.network, c.nodes),
                   sim::format_duration(c.network.link.latency_s), per_link ? " a link" : "",
                   sim::format_bandwidth(c.network.link.bandwidth_Bps),
                   run.spec.lv08 ? ", SimGrid's LV08 model" : "");
  std::vector<double> bytes;
  for (const WorkloadBucket& b : run.plan.buckets)
    bytes.push_back(double(b.bytes));
  s += fmt::format("# buckets  {}; all_reduce {}\n", describe_bucket_bytes(bytes),
                   to_string(run.plan.all_reduce.algorithm));
  return s;
}

// Every rank's times, at rank 0 (the others get an empty result), as the doubles they are
// (two floats each, bit for bit): a float's rounding of the two apart would show as
// exposed time where there is none.
std::vector<std::vector<StepTimes>> gather_times(Communicator& comm,
                                                 const std::vector<StepTimes>& mine) {
  using Pair = std::array<float, 2>;
  const Communicator::RealPayloads real(comm);
  std::vector<Pair> send;
  for (const StepTimes& t : mine) {
    send.push_back(std::bit_cast<Pair>(t.compute_s));
    send.push_back(std::bit_cast<Pair>(t.total_s));
  }
  const size_t floats = send.size() * 2;
  std::vector<float> all(comm.rank() == 0 ? floats * comm.size() : 0);
  gather(comm, std::span<const float>(send.data()->data(), floats), all, 0);
  std::vector<std::vector<StepTimes>> times(comm.rank() == 0 ? mine.size() : 0);
  auto at = [&](int r, size_t i) {
    return std::bit_cast<double>(Pair{all[r * floats + 2 * i], all[r * floats + 2 * i + 1]});
  };
  for (size_t step = 0; step < times.size(); ++step)
    for (int r = 0; r < comm.size(); ++r)
      times[step].push_back({.compute_s = at(r, 2 * step), .total_s = at(r, 2 * step + 1)});
  return times;
}

void run_rank(Communicator& comm, const Run& run, int64_t steps, WorkloadResult& result) {
  const sim::NodeOptions& node = run.spec.cluster.node_of(comm.rank());
  const RankSpeed speed{.flops_per_s = node.gflops * 1e9, .slowdown = node.straggler};
  size_t floats = 0;
  for (const WorkloadBucket& b : run.plan.buckets)
    floats += b.floats();
  std::vector<float> own;
  std::span<float> gradients;
  if (comm.phantom_payloads()) {
    gradients = comm.shared_buffer(floats);
  } else {
    own.assign(floats, 0.0f);
    gradients = own;
  }
  std::vector<StepTimes> mine;
  for (int64_t s = 0; s < steps; ++s)
    mine.push_back(run_workload_step(comm, run.plan, speed, gradients));
  const double end = comm.model_s();
  auto times = gather_times(comm, mine);
  if (comm.rank() != 0) return;
  result.times = std::move(times);
  result.model_s = end;
}

}  // namespace

void add_workload_command(CLI::App& bench, WorkloadFlags& f) {
  CLI::App* w = bench.add_subcommand(
      "workload",
      "Time data-parallel training steps of a real model (per-layer table) or an ASTRA-sim "
      "workload file in model time: compute, exposed communication, busiest links (phantom "
      "payloads by default on --backend simgrid)");
  w->add_option("--workload", f.workload,
                "resnet50 | bert-large | gpt2 | gpt2-xl, or a file in ASTRA-sim 1.0's text format")
      ->capture_default_str();
  w->add_option("--batch-per-rank", f.batch_per_rank, "Samples each rank computes a step")
      ->capture_default_str();
  w->add_option("--steps", f.steps, "Training steps")->capture_default_str();
  w->add_option("--bucket-mb", f.bucket_mb,
                "DDP's bucket_cap_mb: gradients all-reduced together; 0: one all-reduce after "
                "backward; 0.001 (and --first-bucket-mb 0.001): a bucket per layer")
      ->capture_default_str();
  w->add_option("--first-bucket-mb", f.first_bucket_mb, "The first bucket's cap, as DDP's")
      ->capture_default_str();
  w->add_option("--algorithm", f.algorithm,
                "auto | naive | ring | tree | halving_doubling | recursive_doubling")
      ->capture_default_str();
  w->add_flag("--per-rank", f.per_rank, "Also print every rank's times");
  w->add_option("--links", f.links, "How many of the busiest links to print")
      ->capture_default_str();
  w->add_option("--json", f.json, "Also write every rank's times and every link's bytes here");
  sim::add_run_flags(*w, f.run, sim::kBackendFlag | sim::kClusterFlags, workload_defaults());
  f.command = w;
}

namespace {

bool same_buckets(const std::vector<WorkloadBucket>& a, const std::vector<WorkloadBucket>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].lowest != b[i].lowest || a[i].bytes != b[i].bytes) return false;
  return true;
}

// The settings given that changed nothing in this run, each with why: the trap of a sweep
// over a value the result does not depend on.
std::vector<std::string> no_effect(const WorkloadFlags& f, const Run& run,
                                   const WorkloadResult& r) {
  std::vector<std::string> out;
  const Workload& w = run.plan.workload;
  if (!w.uses_flops())
    for (const char* flag : {"--gflops", "--batch-per-rank"})
      if (given(f, flag))
        out.push_back(
            fmt::format("{} had no effect: {}'s compute is given in time (cycles), not "
                        "in flops per sample",
                        flag, w.name));
  const bool messages = run.spec.cluster.nodes > 1 && w.grad_bytes() > 0;
  bool exposed = false;
  for (const auto& ranks : r.times)
    for (const StepTimes& t : ranks)
      exposed = exposed || t.exposed_s() > 1e-9 * t.total_s;
  const char* network[] = {"--latency",   "--bandwidth",     "--topology",
                           "--algorithm", "--network-model", "--eager-limit"};
  for (const char* flag : network) {
    if (!given(f, flag)) continue;
    if (!messages)
      out.push_back(fmt::format("{} had no effect: no message crossed the network ({})", flag,
                                run.spec.cluster.nodes == 1 ? "1 node" : "no gradients"));
    else if (!exposed)
      out.push_back(
          fmt::format("{} had no effect on the step: every all-reduce was hidden "
                      "behind backward (no exposed communication)",
                      flag));
  }
  const auto defaults = workload_buckets(w, kFirstBucketBytes, bucket_cap_bytes(25));
  for (const char* flag : {"--bucket-mb", "--first-bucket-mb"})
    if (given(f, flag) && same_buckets(defaults, run.plan.buckets))
      out.push_back(
          fmt::format("{} had no effect: {}'s layers fall into the same buckets as "
                      "with DDP's defaults (25 MB, the first 1 MB)",
                      flag, w.name));
  return out;
}

}  // namespace

int run_workload(const WorkloadFlags& f) {
  Run run = make_run(f);
  print_now(header(run, f));
  WorkloadResult result;
  const auto start = std::chrono::steady_clock::now();
  run_on_backend(
      f.run.backend, sim::ClusterOptions{run.spec.cluster},
      [&](Communicator& comm) { run_rank(comm, run, f.steps, result); }, {},
      simgrid_run(run.spec, &result.links));
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string out = workload_step_rows(result);
  if (f.per_rank) out += workload_rank_rows(result);
  out += busiest_links(result, f.links);
  const std::vector<std::string> warnings = no_effect(f, run, result);
  for (const std::string& w : warnings)
    out += "warning: " + w + "\n";
  out += fmt::format("# simulated in {:.2f} s of wall time\n", result.wall_s);
  print_now(out);
  if (!f.json.empty()) {
    nlohmann::json j = workload_result_json(result);
    j["workload"] = run.plan.workload.name;
    j["nodes"] = run.spec.cluster.nodes;
    j["backend"] = f.run.backend;
    j["payload"] = run.spec.phantom ? "phantom" : "real";
    j["warnings"] = warnings;
    write_file_atomic(f.json, j.dump(2) + "\n");
    print_now(fmt::format("# written to {}\n", f.json));
  }
  return kExitOk;
}

}  // namespace dsgd::cli
