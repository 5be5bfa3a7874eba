#include "core/mpi/run_rank.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/mpi/mpi_communicator.h"
#include "core/mpi/mpi_session.h"

namespace dsgd::mpi {
namespace {

// The checks every rank makes together, reaching the same verdict: rank 0 alone reports a
// problem, at once (printed and flushed before MPI_Finalize, which mpirun may not wait for),
// and every rank ends with its exit code and nothing more on stderr.
std::vector<RankIdentity> check_ranks(MpiCommunicator& comm, const RankRunOptions& options) {
  try {
    if (options.nodes > 0 && options.nodes != comm.size())
      throw UsageError(fmt::format(
          "--nodes {} but mpirun started {} rank{}: with --backend mpi the world size is "
          "mpirun's -np; drop --nodes or make them equal",
          options.nodes, comm.size(), comm.size() == 1 ? "" : "s"));
    if (options.check_world) options.check_world(comm.size());
    return preflight(comm, options.preflight);
  } catch (const UsageError& e) {
    if (comm.rank() == 0) {
      std::string what = e.what();
      std::replace(what.begin(), what.end(), '\n', ' ');
      fmt::print(stderr, "dsgd: error: {}\n", what);
      std::fflush(stderr);
    }
    throw ReportedByRankZero(e.exit_code());  // MPI_Finalize on the way out, on every rank
  }
}

}  // namespace

bool run_rank(const RankRunOptions& options, const std::function<void(Communicator&)>& fn) {
  MpiSession session;
  MpiCommunicator comm;
  comm.set_timeout(options.timeout);
  comm.set_events(options.events);
  const std::vector<RankIdentity> ranks = check_ranks(comm, options);
  try {
    align_epoch(comm, ranks);  // wall_s: one clock for every rank of a host
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

}  // namespace dsgd::mpi
