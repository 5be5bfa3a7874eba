// MpiSession: MPI's lifetime in one process, as a scoped object. The constructor calls
// MPI_Init_thread (MPI_THREAD_SERIALIZED: one thread at a time calls MPI; the trainer's
// communication thread takes over while the rank thread computes, never beside it)
// and sets MPI_ERRORS_RETURN on MPI_COMM_WORLD so every status reaches DSGD_MPI_CHECK; the
// destructor calls MPI_Finalize. Not a communicator: MpiCommunicator is built on top.
#pragma once

#include <string>

namespace dsgd::mpi {

struct SessionOptions {
  // When mpirun sees a rank die it stops the others with SIGTERM (then SIGKILL). With this
  // set, such a rank prints one line saying so and exits with code 3 (kExitComm) instead of
  // dying silently. This installs a process-wide SIGTERM handler.
  bool report_sigterm = true;
};

class MpiSession {
 public:
  explicit MpiSession(const SessionOptions& options = {});
  ~MpiSession();  // MPI_Finalize, unless abort() ran or MPI was finalized already
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int world_rank() const { return rank_; }
  int world_size() const { return size_; }
  const std::string& host() const { return host_; }

  // Stops every rank of the job with `exit_code` (MPI_Abort on MPI_COMM_WORLD); mpirun
  // exits with that code. For failures of one rank, which the others cannot learn about
  // through MPI without ULFM: they may be blocked waiting for this one.
  [[noreturn]] void abort(int exit_code);

 private:
  int rank_ = 0;
  int size_ = 1;
  std::string host_;
  bool handles_sigterm_ = false;
};

// This machine's host name (gethostname).
std::string host_name();

// The rank's index among the ranks on its host, from the launcher's environment:
// OMPI_COMM_WORLD_LOCAL_RANK (Open MPI's mpirun), MPI_LOCALRANKID (MPICH, Intel MPI),
// SLURM_LOCALID (srun); -1 when none is set. Used to pick one device per rank.
int local_rank_from_env();

}  // namespace dsgd::mpi
