// Runs one function on every rank of the chosen backend: simulated nodes (threads of this
// process) or MPI ranks (this process is one rank of an mpirun job).
#pragma once

#include <string>

#include "sim/cluster.h"

namespace dsgd::cli {

// Returns true when this process hosts rank 0 (always for "sim"), which writes the
// outputs. UsageError for an unknown backend or one this build lacks.
bool run_on_backend(const std::string& backend, const sim::ClusterOptions& sim_options,
                    const sim::NodeFunction& fn);

}  // namespace dsgd::cli
