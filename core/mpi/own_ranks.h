// The ranks of an MPI job that run dsgd. An MPMD job (`mpirun -np 1 python3 send.py : -np 1
// dsgd lesson 2 --backend mpi`) mixes dsgd with other programs; the steps every dsgd rank
// takes together (preflight, a common epoch, the last barrier) run among dsgd's own ranks,
// which the other programs never join. Not a renumbering: dsgd's ranks keep their numbers
// in MPI_COMM_WORLD, so the other programs address them, and are addressed, as usual.
#pragma once

#include <mpi.h>

#include <string>

namespace dsgd::mpi {

// World ranks [first, first + count): those of this process's app context (MPI_APPNUM),
// which Open MPI numbers consecutively (OMPI_APP_CTX_NUM_PROCS lists each context's size).
struct RankRange {
  int first = 0;
  int count = 0;
  bool operator==(const RankRange&) const = default;
};

// The range of context `app_number` given the contexts' sizes ("1 2": one rank, then two);
// every rank when `context_sizes` is empty (a job of one program, or an MPI that does not
// say). UsageError when the sizes are not numbers adding up to `world_size`.
RankRange own_ranks(int app_number, const std::string& context_sizes, int world_size);

// This process's range, from MPI and the launcher's environment (after MPI_Init).
RankRange own_ranks_of_job();

// A communicator of the ranks in `range` (MPI_Comm_create_group: only they take part),
// freed with the object; MPI_COMM_WORLD itself when they are every rank.
class OwnRanksComm {
 public:
  explicit OwnRanksComm(RankRange range);
  ~OwnRanksComm();
  OwnRanksComm(const OwnRanksComm&) = delete;
  OwnRanksComm& operator=(const OwnRanksComm&) = delete;
  MPI_Comm get() const { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_WORLD;
};

}  // namespace dsgd::mpi
