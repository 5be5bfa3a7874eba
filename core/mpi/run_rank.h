// One MPI rank's run of a node function (`dsgd train|bench|lesson --backend mpi`, under
// mpirun): MPI's lifetime, the communicator with the run's deadline and events, the checks
// every rank makes together first (the world size asked for, preflight), a common epoch, the
// function, then a last barrier under the watchdog. The MPI twin of sim::run_cluster.
// Not mpirun: every rank is a process it started.
#pragma once

#include <chrono>
#include <functional>

#include "core/comm/communicator.h"
#include "core/errors.h"
#include "core/mpi/preflight.h"

namespace dsgd::mpi {

struct RankRunOptions {
  std::chrono::milliseconds timeout{30000};  // deadline of every blocking call
  EventSink* events = nullptr;
  PreflightInput preflight;  // what every rank must share (0: not checked)
  int nodes = 0;             // --nodes as given: must equal the world size; 0: any
  // More of what the world size must be (a lesson's ranks, a checkpoint's world): throws
  // UsageError, the same on every rank, which rank 0 reports once.
  std::function<void(int world)> check_world;
  // Told dsgd's own ranks of the world, [first, first + count), before `fn` runs (own_ranks.h).
  std::function<void(int first, int count)> own_ranks;
  // `fn` runs among dsgd's own ranks only, numbered from 0 among them, and `nodes` and
  // check_world count those: for training, whose every rank runs the same program, beside
  // other programs of an MPMD job. Else `fn` gets the whole world (a lesson talks to them).
  bool own_only = false;
};

// Runs `fn` on this rank (MPI_Init here, MPI_Finalize before returning) and returns whether
// it is dsgd's first rank (rank 0 unless other programs share the job: own_ranks.h). Problems every
// rank finds together (world size, preflight) end the job normally with one message, printed by
// rank 0 before MPI_Finalize (ReportedByRankZero). A failure of this rank alone is printed here and
// ends the job with MPI_Abort and the error's exit code: Open MPI without ULFM gives the other
// ranks no way to learn of it, and they may be blocked waiting for this one.
bool run_rank(const RankRunOptions& options, const std::function<void(Communicator&)>& fn);

// For a rank that cannot start (bad flags, a missing file) in a job whose other ranks may
// be starting: takes part in their preflight with `error`, so that the job ends on every
// rank with one message, printed by dsgd's first rank. Throws ReportedByRankZero.
[[noreturn]] void report_startup_error(const Error& error);
// Whether MPI_Init has run in this process (it cannot run twice).
bool mpi_has_started();

}  // namespace dsgd::mpi
