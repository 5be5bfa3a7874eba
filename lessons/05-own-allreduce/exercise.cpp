// Lesson 5 exercise: write the ring all-reduce yourself.
//
//   cp lessons/05-own-allreduce/exercise.cpp my_ring.cpp   # then fill in the TODOs
//   dsgd lesson 5 --check my_ring.cpp
//
// my_all_reduce must leave in `data`, on every rank, the element-wise SUM of every rank's
// `data`. Use only comm.rank(), comm.size(), send/recv/isend/irecv/wait (no dsgd
// collectives). The checker runs it on 1 to 8 ranks with vectors of 0, 1, R-1, R+1, 1000
// and 2^18 floats, checks that no rank sends more than a ring does, and shows every case.
//
// The plan (R = comm.size(), r = comm.rank(), n = data.size()):
//   Cut data into R chunks; chunk c is [n*c/R, n*(c+1)/R) (sizes differ by at most one;
//   some may be empty). Ring neighbours: right = (r + 1) % R, left = (r - 1 + R) % R.
//   1. Reduce-scatter, R - 1 steps. In step s, send chunk (r - s) mod R to the right,
//      receive chunk (r - s - 1) mod R from the left into a scratch buffer, and add it to
//      your own copy of that chunk. Afterwards rank r holds the full sum of chunk (r + 1) % R.
//   2. All-gather, R - 1 steps. In step s, send chunk (r + 1 - s) mod R to the right and
//      receive chunk (r - s) mod R from the left straight into data.
//   Use isend + recv + wait in each step (lesson 3): with a blocking send first, every rank
//   blocks in send at once for chunks above the eager limit (64 KiB), as under Open MPI.
#include <span>
#include <vector>

#include "core/comm/communicator.h"

void my_all_reduce(dsgd::Communicator& comm, std::span<float> data) {
  const int world = comm.size(), rank = comm.rank();
  const size_t n = data.size();
  (void)world;
  (void)rank;
  (void)n;
  // TODO 1: reduce-scatter around the ring.
  // TODO 2: all-gather around the ring.
}
