// `dsgd bench workload`: one or more data-parallel training steps of a real model's per-layer
// table (resnet50, bert-large, gpt2, gpt2-xl) or of an ASTRA-sim 1.0 workload file, timed in
// model time on SimGrid ranks (or simulated nodes): per step, compute, exposed communication
// and the step, per rank and over all ranks, the busiest links, and a warning for each
// setting given that changed nothing. Compute is modelled (core/workload/workload_step.h),
// not run; no values are trained. Here the flags, the run and the printing.
#pragma once

#include <cstdint>
#include <string>

#include "sim/run_flags.h"

namespace CLI {
class App;
}

namespace dsgd::cli {

struct WorkloadFlags {
  std::string workload = "resnet50";  // a built-in table's name, or an ASTRA-sim file
  int64_t batch_per_rank = 32;
  int64_t steps = 1;
  double bucket_mb = 25, first_bucket_mb = 1;
  std::string algorithm = "auto";
  bool per_rank = false;
  int links = 5;  // the busiest links printed
  std::string json;
  sim::RunFlags run;                  // --backend --payload and the cluster flags
  const CLI::App* command = nullptr;  // to tell a flag given from its default
};

// Adds `workload` under `bench` (the `dsgd bench` command).
void add_workload_command(CLI::App& bench, WorkloadFlags& flags);
int run_workload(const WorkloadFlags& flags);

}  // namespace dsgd::cli
