// What `dsgd bench workload` prints and writes: the header naming the model, compute,
// network and buckets; a row per step (compute, exposed communication, the step, over all
// ranks); each rank's rows when asked; the busiest links; and the JSON of all of it. Only
// formatting: workload_command.cpp runs the steps.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/workload/workload_step.h"
#include "sim/link_use.h"

namespace dsgd::cli {

// What a run measured: times[step][rank], the links' bytes (SimGrid), the wall time.
struct WorkloadResult {
  std::vector<std::vector<StepTimes>> times;
  std::vector<sim::LinkUse> links;
  double wall_s = 0;
  double model_s = 0;  // the run's model time at its end
};

std::string workload_step_rows(const WorkloadResult& result);
std::string workload_rank_rows(const WorkloadResult& result);
// The `count` busiest links, with the bytes they carried and their mean rate over the run.
std::string busiest_links(const WorkloadResult& result, int count);
nlohmann::json workload_result_json(const WorkloadResult& result);

}  // namespace dsgd::cli
