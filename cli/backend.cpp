#include "cli/backend.h"

#include <fmt/format.h>

#include "core/errors.h"

namespace dsgd::cli {

bool run_on_backend(const std::string& backend, const sim::ClusterOptions& sim_options,
                    const sim::NodeFunction& fn) {
  if (backend == "sim") {
    sim::run_cluster(sim_options, fn);
    return true;
  }
  if (backend == "mpi")
    throw UsageError("--backend mpi: this dsgd was built without the MPI backend "
                     "(apt-get install libopenmpi-dev, then reconfigure); use --backend sim");
  throw UsageError(fmt::format("--backend {}: use sim or mpi", backend));
}

}  // namespace dsgd::cli
