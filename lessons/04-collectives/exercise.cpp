// Lesson 4 exercise: write the binomial-tree broadcast yourself.
//
//   cp lessons/04-collectives/exercise.cpp my_broadcast.cpp   # then fill in the TODO
//   dsgd lesson 4 --check my_broadcast.cpp
//
// tree_broadcast must leave in `data`, on every rank, what the root's `data` held. Use only
// comm.rank(), comm.size(), send/recv/isend/irecv/wait (no dsgd collectives). The checker
// runs it on 1 to 8 ranks, with roots 0, R/2 and R-1 and vectors of 0 to 2^18 floats, and
// checks that it is a tree: no rank sends more than ceil(log2 R) messages, and no rank is
// more than ceil(log2 R) hops from the root.
//
// The plan (R = comm.size(); number the ranks from the root: rel = (rank - root + R) % R):
//   Round k = 1, 2, 4, ... while k < R: the ranks with rel < k hold the data; each sends it
//   to rel + k if that is < R, and the rank with k <= rel < 2k receives it from rel - k.
//   A rank receives once (in the round with k <= rel < 2k), then sends in every later round.
//   Turn a relative rank back into a real one with (rel + root) % R.
#include <span>

#include "core/comm/communicator.h"

void tree_broadcast(dsgd::Communicator& comm, std::span<float> data, int root) {
  const int world = comm.size();
  const int rel = (comm.rank() - root + world) % world;
  (void)rel;
  // TODO: the rounds k = 1, 2, 4, ... while k < world.
}
