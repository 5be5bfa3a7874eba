// `dsgd bench collective`: its flags, the plan they describe (checked before any rank
// starts), the run on the chosen backend, and the table, summary and JSON rows printed.
// The sweep itself is bench/collective/ (collective_bench.h).
#include "cli/bench_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <memory>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "bench/collective/collective_bench.h"
#include "bench/collective/collective_report.h"
#include "cli/backend.h"
#include "core/errors.h"
#include "core/io/atomic_file.h"
#include "sim/cluster.h"
#include "sim/cluster_shape.h"
#include "sim/link_model.h"

namespace dsgd::cli {

void add_bench_command(CLI::App& app, BenchFlags& f) {
  CLI::App* bench = app.add_subcommand("bench", "Measure communication on this backend");
  bench->require_subcommand(1);
  CLI::App* c =
      bench->add_subcommand("collective",
                            "Time a collective over a sweep of sizes, check every result, compare "
                            "with the alpha-beta prediction (like nccl-tests)");
  c->add_option("--op", f.op,
                "all_reduce | broadcast | reduce | all_gather | reduce_scatter | gather | "
                "scatter | barrier")
      ->capture_default_str();
  c->add_option("--algorithm", f.algorithm,
                algorithm_names(" | ", " | ") +
                    " (all_reduce has five, broadcast two, the other ops one each)")
      ->capture_default_str();
  c->add_option("--min-bytes", f.min_bytes, "Smallest size (K, M, G = KiB, MiB, GiB)")
      ->capture_default_str();
  c->add_option("--max-bytes", f.max_bytes, "Largest size")->capture_default_str();
  c->add_option("--step-factor", f.step_factor, "Each size is this many times the previous")
      ->capture_default_str();
  c->add_option("--iters", f.iters, "Timed iterations per size")
      ->default_str("20; 1 with --backend simgrid");
  c->add_option("--warmup", f.warmup, "Untimed iterations per size first")
      ->default_str("5; 0 with --backend simgrid");
  c->add_option("--reduce-op", f.reduce_op, "sum | avg | max | min | prod")->capture_default_str();
  c->add_option("--root", f.root, "Root rank of broadcast, reduce, gather, scatter")
      ->capture_default_str();
  c->add_option("--json", f.json, "Also write the rows as JSON to this file");
  sim::add_run_flags(*c, f.run, sim::kBackendFlag | sim::kClusterFlags, bench_defaults());
  c->add_flag("--explain", f.explain,
              "Print each algorithm's steps and bytes at --max-bytes, and exit");
  c->add_flag("--no-baseline", f.no_baseline,
              "Skip the baselines: the loopback ring (sim), the bare MPI_Allreduce (mpi, native)");
}

sim::RunSpec bench_defaults() {
  sim::RunSpec d;
  d.cluster.timeout = std::chrono::seconds(60);
  return d;
}

namespace {

// The plan of the flags on `nodes` ranks (MPI: 1 until mpirun says more), every value
// checked before any rank starts, and --max-bytes; run_bench adds the baselines.
std::pair<bench::CollectivePlan, uint64_t> make_plan(const BenchFlags& f, const sim::RunSpec& spec,
                                                     int nodes) {
  const bool sim = spec.backend != sim::Backend::mpi;  // the world is known now
  const bool simgrid = spec.backend == sim::Backend::simgrid;
  bench::CollectivePlan plan{
      .op = parse_collective_op(f.op),
      .requested = parse_algorithm(f.algorithm),
      .reduce_op = parse_reduce_op(f.reduce_op),
      .root = f.root,
      .link = spec.cluster.network.link,
      .iters = f.iters != f.kNotGiven ? f.iters
               : simgrid              ? 1
                                      : 20,
      .warmup = f.warmup != f.kNotGiven ? f.warmup
                : simgrid               ? 0
                                        : 5,
      .backend = f.run.backend,
      .virtual_time = simgrid,
      .phantom = spec.phantom,
      .predictable = !sim::is_cluster_topology(spec.cluster.network.topology),
      .lv08 = spec.lv08};
  if (plan.iters < 1) throw UsageError(fmt::format("--iters {}: use 1 or more", f.iters));
  if (plan.warmup < 0) throw UsageError(fmt::format("--warmup {}: use 0 or more", f.warmup));
  if (!(f.step_factor > 1) || !std::isfinite(f.step_factor))
    throw UsageError(fmt::format("--step-factor {}: use a number above 1, e.g. 2", f.step_factor));
  if (f.root < 0 || (sim && f.root >= nodes))
    throw UsageError(fmt::format("--root {}: use a rank of the world, 0..{}", f.root, nodes - 1));
  const uint64_t min_bytes = sim::parse_size_bytes(f.min_bytes, "--min-bytes");
  const uint64_t max_bytes = sim::parse_size_bytes(f.max_bytes, "--max-bytes");
  if (min_bytes > max_bytes)
    throw UsageError(
        fmt::format("--min-bytes {} is above --max-bytes {}", f.min_bytes, f.max_bytes));
  if (max_bytes > bench::kMaxBenchBytes)
    throw UsageError(
        fmt::format("--max-bytes {}: at most 1G (every node holds the buffers)", f.max_bytes));
  // An algorithm the op lacks is refused now, not by every rank later.
  resolve_algorithm(plan.op, plan.requested, nodes, max_bytes);
  sim::check_output_path(f.json, "--json");
  plan.sizes = bench::size_sweep(plan.op, min_bytes, max_bytes, f.step_factor);
  return {plan, max_bytes};
}

// Rank 0's last lines: the wrong elements in all, where the JSON went; exit code 1 when any
// result was wrong.
int finish(const BenchFlags& f, const bench::CollectivePlan& plan, int world,
           const std::vector<bench::CollectiveRow>& rows) {
  uint64_t wrong = 0;
  for (const bench::CollectiveRow& r : rows)
    wrong += r.wrong;
  if (plan.phantom)
    fmt::print("# results not checked (phantom payloads carry no values)\n");
  else
    fmt::print("# {} wrong element{} in all results\n", wrong, wrong == 1 ? "" : "s");
  if (!f.json.empty()) {
    write_file_atomic(f.json, bench::report_json(plan, world, rows).dump(2) + "\n");
    fmt::print("# rows written to {}\n", f.json);
  }
  if (wrong > 0) {
    fmt::print(stderr, "dsgd: error: {} {} results had {} wrong elements\n", to_string(plan.op),
               to_string(plan.requested), wrong);
    return kExitOther;
  }
  return kExitOk;
}

}  // namespace

void print_now(const std::string& text) {
  fmt::print("{}", text);
  std::fflush(stdout);
}

int run_bench(const BenchFlags& f) {
  const sim::RunSpec spec = sim::build_run_spec(f.run, bench_defaults());
  const bool sim = spec.backend == sim::Backend::sim;
  const int nodes =
      spec.backend != sim::Backend::mpi ? spec.cluster.nodes : std::max(spec.cluster.nodes, 1);
  auto checked = make_plan(f, spec, nodes);
  bench::CollectivePlan& plan = checked.first;
  const uint64_t max_bytes = checked.second;
  if (f.explain) {
    fmt::print("{}", bench::explain(plan, nodes, max_bytes));
    return kExitOk;
  }
  if (sim && nodes >= 2 && !f.no_baseline && max_bytes >= bench::kBaselineFromBytes)
    plan.loopback = std::make_shared<bench::LoopbackRing>(nodes);
  if (plan.op == CollectiveOp::all_reduce && plan.requested == Algorithm::native &&
      plan.reduce_op == ReduceOp::SUM && !f.no_baseline)
    plan.bare = bench::bare_all_reduce(f.run.backend);

  std::vector<bench::CollectiveRow> rows;
  int world = nodes;
  const bench::SweepObserver observer{
      .on_start = [&](int w) { print_now(bench::report_header(plan, w)); },
      .on_row =
          [&](const bench::CollectiveRow& row) {
            print_now(bench::report_row(row));
            rows.push_back(row);
          }};
  const bool hosts_rank0 = run_on_backend(
      f.run.backend, sim::ClusterOptions{spec.cluster},
      [&](Communicator& comm) {
        if (comm.rank() == 0) world = comm.size();
        bench::run_collective_bench(comm, plan, observer);
      },
      {.own_only = true},  // among dsgd's ranks, beside other programs of an MPMD job
      simgrid_run(spec));
  if (!hosts_rank0) return kExitOk;
  return finish(f, plan, world, rows);
}

}  // namespace dsgd::cli
