#include "core/mpi/run_rank.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/mpi/mpi_communicator.h"
#include "core/mpi/mpi_session.h"
#include "core/mpi/own_ranks.h"

namespace dsgd::mpi {
namespace {

// The checks dsgd's ranks (`own`) make together, reaching the same verdict: the first of
// them alone reports a problem, at once (printed and flushed before MPI_Finalize, which
// mpirun may not wait for), and every rank ends with its exit code and nothing more.
std::vector<RankIdentity> check_ranks(MpiCommunicator& world, MpiCommunicator& own,
                                      const RankRunOptions& options) {
  try {
    // Preflight first: a rank that could not start (its flags, its files) takes part in it
    // with its error (report_startup_error), so every rank learns of it there.
    std::vector<RankIdentity> ranks = preflight(own, options.preflight);
    const int size = options.own_only ? own.size() : world.size();
    if (options.nodes > 0 && options.nodes != size)
      throw UsageError(fmt::format(
          "--nodes {} but mpirun started {} rank{}{}: with --backend mpi the world size is "
          "mpirun's -np; drop --nodes or make them equal",
          options.nodes, size, size == 1 ? "" : "s",
          size < world.size() ? " of dsgd (and other programs)" : ""));
    if (options.check_world) options.check_world(size);
    return ranks;
  } catch (const Error& e) {
    if (!dynamic_cast<const UsageError*>(&e) && !dynamic_cast<const StartupError*>(&e)) throw;
    if (own.rank() == 0) {
      std::string what = e.what();
      std::replace(what.begin(), what.end(), '\n', ' ');
      fmt::print(stderr, "dsgd: error: {}\n", what);
      std::fflush(stderr);
    }
    throw ReportedByRankZero(e.exit_code());  // MPI_Finalize on the way out, on every rank
  }
}

// Every world rank's host name: those of dsgd's ranks from preflight, "" for the others.
std::vector<std::string> world_hosts(const std::vector<RankIdentity>& ranks, RankRange range,
                                     int world) {
  std::vector<std::string> hosts(world);
  for (int k = 0; k < range.count && k < static_cast<int>(ranks.size()); ++k)
    hosts[range.first + k] = ranks[k].host;
  return hosts;
}

}  // namespace

bool run_rank(const RankRunOptions& options, const std::function<void(Communicator&)>& fn) {
  MpiSession session;
  const RankRange range = own_ranks_of_job();
  OwnRanksComm own_comm(range);
  MpiCommunicator comm, own(own_comm.get());
  comm.set_timeout(options.timeout);
  own.set_timeout(options.timeout);
  MpiCommunicator& run_on = options.own_only ? own : comm;
  const std::vector<RankIdentity> ranks = check_ranks(comm, own, options);
  try {
    comm.set_hosts(world_hosts(ranks, range, comm.size()));
    own.set_hosts(world_hosts(ranks, {0, range.count}, own.size()));
    align_epoch(own, ranks);  // wall_s: one clock for every rank of a host
    comm.set_epoch(own.epoch());
    if (options.own_ranks) options.own_ranks(range.first, range.count);
    run_on.set_events(options.events);  // the run's, not preflight's nor the clock's messages
    fn(run_on);
    // MPI_Finalize has no deadline; meeting here first (under the watchdog) keeps a rank
    // that is stuck elsewhere from hanging the others in MPI_Finalize.
    own.native_barrier();
  } catch (const std::exception& e) {
    const auto* error = dynamic_cast<const Error*>(&e);
    const std::string what = e.what();
    // Errors from the communicator start with "rank R (host H)"; say it for the others.
    fmt::print(stderr, "dsgd: error: {}{}\n",
               what.rfind("rank ", 0) == 0 ? "" : run_on.describe(run_on.rank()) + ": ", what);
    // TODO(issue 5): this rank's trace so far is lost here (MPI_Abort ends the process);
    // a hook that writes it first would be called here.
    session.abort(error ? error->exit_code() : kExitOther);
  }
  return own.rank() == 0;
}

bool mpi_has_started() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  return initialized != 0;
}

void report_startup_error(const Error& error) {
  RankRunOptions options;
  options.preflight.error = error.what();
  options.preflight.exit_code = error.exit_code();
  run_rank(options, [](Communicator&) {});
  throw ReportedByRankZero(error.exit_code());  // not reached: preflight throws
}

}  // namespace dsgd::mpi
