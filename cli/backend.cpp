#include "cli/backend.h"

#include <filesystem>

#include <fmt/format.h>

#include "core/errors.h"
#ifdef DSGD_HAVE_MPI
#include "core/mpi/run_rank.h"
#endif

namespace dsgd::cli {

bool run_on_backend(const std::string& backend, const sim::ClusterOptions& sim_options,
                    const sim::NodeFunction& fn, const RunChecks& checks) {
  if (backend == "sim") {
    sim::run_cluster(sim_options, fn);
    return true;
  }
  if (backend == "mpi") {
#ifdef DSGD_HAVE_MPI
    return mpi::run_rank(
        {.timeout = sim_options.timeout,
         .events = sim_options.events,
         .preflight = {.config_hash = checks.config_hash, .data_hash = checks.data_hash},
         .nodes = checks.nodes},
        fn);
#else
    throw UsageError(
        "--backend mpi: this dsgd was built without the MPI backend "
        "(apt-get install libopenmpi-dev, then reconfigure); use --backend sim");
#endif
  }
  throw UsageError(fmt::format("--backend {}: use sim or mpi", backend));
}

std::string per_rank_path(const std::string& path, int rank) {
  const std::filesystem::path p(path);
  std::filesystem::path out = p;
  out.replace_filename(fmt::format("{}.rank{}{}", p.stem().string(), rank, p.extension().string()));
  return out.string();
}

}  // namespace dsgd::cli
