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
};

// Thrown on ranks other than 0 when every rank found the same problem (a preflight
// mismatch) and rank 0 reports it: main exits with the code and prints nothing, so the
// job prints one message, not one per rank.
class ReportedByRankZero : public Error {
 public:
  explicit ReportedByRankZero(int exit_code) : Error("reported by rank 0"), code_(exit_code) {}
  int exit_code() const override { return code_; }

 private:
  int code_;
};

// Runs `fn` on this rank (MPI_Init here, MPI_Finalize before returning) and returns whether
// it is rank 0. Problems every rank finds together (world size, preflight) end the job
// normally with one message: UsageError on rank 0, ReportedByRankZero on the others. A
// failure of this rank alone is printed here and ends the job with MPI_Abort and the
// error's exit code: Open MPI without ULFM gives the other ranks no way to learn of it, and
// they may be blocked waiting for this one.
bool run_rank(const RankRunOptions& options, const std::function<void(Communicator&)>& fn);

}  // namespace dsgd::mpi
