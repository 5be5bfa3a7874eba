#include "cli/summary.h"

#include <algorithm>

#include <fmt/format.h>

#include "cli/device_choice.h"

namespace dsgd::cli {
namespace {

void print_outcome(const sim::RunSpec& spec, const TrainResult& r, double total_s) {
  const bool local = spec.local_sgd > 0 && r.steps > spec.local_sgd_start;
  const char* own_slice = local ? ", rank 0's slice: the step was local"
                          : !spec.compress.empty()
                              ? ", rank 0's slice: --compress sums gradients only"
                          : spec.parameter_servers > 0 ? ", rank 0's slice: a worker's own"
                                                       : "";
  fmt::print("  final loss       {:.4f} (training, last step{})\n", r.final_loss, own_slice);
  if (r.test_accuracy)
    fmt::print("  test accuracy    {:.2f} %  (test loss {:.4f})\n", *r.test_accuracy * 100,
               r.test_loss.value_or(0));
  else if (r.test_loss)
    fmt::print("  test loss        {:.4f}\n", *r.test_loss);
  fmt::print("  wall time        {:.2f} s  ({:.2f} ms per step)\n", total_s,
             r.wall_s * 1e3 / std::max<int64_t>(r.steps_run, 1));
}

// "compression      powersgd:1 from step 1000: 12.5x fewer values sent (PowerSGD's count)".
void print_compression(const sim::RunSpec& spec, const TrainResult& r) {
  const bool powersgd = spec.compress.starts_with("powersgd");
  const std::string from = powersgd ? fmt::format(" from step {}", spec.powersgd_start) : "";
  if (r.compression.after <= 0) {
    fmt::print("  compression      {}{}: no step compressed yet\n", spec.compress, from);
    return;
  }
  fmt::print("  compression      {}{}: {:.3g}x fewer gradient values sent{}\n", spec.compress, from,
             r.compression.ratio(), powersgd ? " (PowerSGDState's count)" : "");
}

// "servers          1 of 4 ranks, staleness at most 2 steps: 300 updates, each 1.64 updates
// stale on average, at most 6".
void print_servers(const sim::RunSpec& spec, const TrainResult& r) {
  const std::string bound = spec.max_staleness < 0
                                ? std::string("no staleness bound")
                                : fmt::format("staleness at most {} step{}", spec.max_staleness,
                                              spec.max_staleness == 1 ? "" : "s");
  fmt::print(
      "  servers          {} of {} ranks, {}: {} updates, each {:.2f} updates stale on "
      "average, at most {}\n",
      spec.parameter_servers, r.world, bound, r.staleness.updates, r.staleness.mean,
      r.staleness.max);
}

void print_communication(const sim::RunSpec& spec, const TrainResult& r) {
  const bool sim = spec.backend != sim::Backend::mpi;  // a network dsgd models
  if (spec.device != "cpu") fmt::print("  device           {}\n", describe_device(spec, r.world));
  if (!r.gradient_reducer.empty())
    fmt::print("  gradients        summed on the GPUs by {} (not through the {})\n",
               r.gradient_reducer, sim ? "simulated network" : "MPI library");
  const double busy = r.compute_s + r.comm_s;
  fmt::print("  communication    {:.2f} s of {:.2f} s busy on rank 0 ({:.1f} %), {:.2f} MB sent\n",
             r.comm_s, busy, busy > 0 ? 100 * r.comm_s / busy : 0.0, r.bytes_sent / 1e6);
  if (spec.local_sgd > 0)
    fmt::print(
        "  local SGD        from step {}, each rank steps alone; parameters averaged every {} "
        "steps\n",
        spec.local_sgd_start, spec.local_sgd);
  if (!spec.compress.empty()) print_compression(spec, r);
  if (spec.parameter_servers > 0) print_servers(spec, r);
  if (!r.buckets.empty())
    fmt::print("  buckets          {}, each all-reduced while backward goes on\n", r.buckets);
  if (!sim) return;
  fmt::print("  network          {}, all-reduce {}\n", sim::describe_network(spec.cluster),
             r.gradient_reducer.empty() ? to_string(spec.allreduce) : "nccl");
  const bool simgrid = spec.backend == sim::Backend::simgrid;
  if (r.model_s >= 0)
    fmt::print("  model time       {:.3f} s ({:.2f} ms per step, {}, {})\n", r.model_s,
               r.model_s * 1e3 / std::max<int64_t>(r.steps_run, 1),
               simgrid ? (spec.lv08 ? "SimGrid's LV08 links" : "SimGrid's CM02 links")
                       : "alpha-beta links",
               spec.measured_compute ? "compute as measured"
                                     : fmt::format("{:g} GFLOP/s nodes", spec.cluster.node.gflops));
}

// "membership       rank 1 lost after step 19: 3 ranks went on from step 19 (in-process)",
// one line per change.
void print_membership(const RunReport& report) {
  const char* policy = sim::to_string(report.spec.elastic.policy);
  if (report.membership.empty()) {
    fmt::print("  membership       unchanged (--elastic {}: no node was lost)\n", policy);
    return;
  }
  for (size_t i = 0; i < report.membership.size(); ++i)
    fmt::print("  {:<16} {}\n", i == 0 ? "membership" : "", report.membership[i]);
}

void print_files(const RunReport& report) {
  const sim::Outputs& out = report.spec.outputs;
  if (!report.resumed.empty()) fmt::print("  resumed from     {}\n", report.resumed);
  if (!report.checkpoints.empty()) fmt::print("  checkpoints      {}\n", report.checkpoints);
  if (!out.save.empty()) fmt::print("  saved            {}\n", out.save);
  if (!out.metrics.empty()) fmt::print("  metrics          {}\n", out.metrics);
  if (!report.trace.empty()) fmt::print("  trace            {}\n", report.trace);
  if (!report.monitor.empty()) fmt::print("  monitor          {}\n", report.monitor);
}

}  // namespace

void print_summary(const RunReport& report) {
  const TrainResult& r = report.result;
  const Dataset& data = report.data;
  fmt::print("\n{}: {} on {} ({} train / {} test), global batch {}, {} steps\n", report.what,
             ModelSpec::parse(report.spec.model).str(), data.name, data.train.size(),
             data.test.size(), report.spec.batch, r.steps);
  print_outcome(report.spec, r, report.total_s);
  print_communication(report.spec, r);
  // MPI ranks do not go on: an agent starts the job again (scripts/mpirun-elastic).
  if (report.spec.elastic.policy != sim::ElasticPolicy::none &&
      report.spec.backend != sim::Backend::mpi)
    print_membership(report);
  print_files(report);
}

}  // namespace dsgd::cli
