#include "cli/backend.h"

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "core/errors.h"
#ifdef DSGD_HAVE_MPI
#include "core/mpi/mpi_communicator.h"
#include "core/mpi/mpi_session.h"
#include "core/mpi/preflight.h"
#endif

namespace dsgd::cli {
namespace {

#ifdef DSGD_HAVE_MPI
// This process is one rank. Problems every rank finds together (world size, preflight)
// end the job normally with one message from rank 0 and exit code 2 on every rank. A
// failure of this rank alone ends the job with MPI_Abort: Open MPI without ULFM gives the
// other ranks no way to learn of it, and they may be blocked waiting for this one.
bool run_on_mpi(const sim::ClusterOptions& options, const sim::NodeFunction& fn,
                const RunChecks& checks) {
  mpi::MpiSession session;
  mpi::MpiCommunicator comm;
  comm.set_timeout(options.timeout);
  comm.set_events(options.events);
  std::vector<mpi::RankIdentity> ranks;
  try {
    if (checks.nodes > 0 && checks.nodes != comm.size())
      throw UsageError(fmt::format(
          "--nodes {} but mpirun started {} rank{}: with --backend mpi the world size is "
          "mpirun's -np; drop --nodes or make them equal",
          checks.nodes, comm.size(), comm.size() == 1 ? "" : "s"));
    ranks =
        mpi::preflight(comm, {.config_hash = checks.config_hash, .data_hash = checks.data_hash});
  } catch (const UsageError& e) {
    if (comm.rank() == 0) throw;  // MPI_Finalize on the way out, on every rank
    throw ReportedByRankZero(e.exit_code());
  }
  try {
    mpi::align_epoch(comm, ranks);  // wall_s: one clock for every rank of a host
    fn(comm);
    // MPI_Finalize has no deadline; meeting here first (under the watchdog) keeps a rank
    // that is stuck elsewhere from hanging the others in MPI_Finalize.
    comm.native_barrier();
  } catch (const std::exception& e) {
    const auto* error = dynamic_cast<const Error*>(&e);
    const std::string what = e.what();
    // Errors from the communicator start with "rank R (host H)"; say it for the others.
    fmt::print(stderr, "dsgd: error: {}{}\n",
               what.rfind("rank ", 0) == 0 ? "" : comm.describe(comm.rank()) + ": ", what);
    // TODO(issue 5): this rank's trace so far is lost here (MPI_Abort ends the process);
    // a hook that writes it first would be called here.
    session.abort(error ? error->exit_code() : kExitOther);
  }
  return comm.rank() == 0;
}
#endif

}  // namespace

bool run_on_backend(const std::string& backend, const sim::ClusterOptions& sim_options,
                    const sim::NodeFunction& fn, const RunChecks& checks) {
  if (backend == "sim") {
    sim::run_cluster(sim_options, fn);
    return true;
  }
  if (backend == "mpi") {
#ifdef DSGD_HAVE_MPI
    return run_on_mpi(sim_options, fn, checks);
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
