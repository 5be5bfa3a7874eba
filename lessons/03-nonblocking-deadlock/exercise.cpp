// Lesson 3 exercise: fix the deadlock.
//
//   cp lessons/03-nonblocking-deadlock/exercise.cpp my_shift.cpp   # then fix it
//   dsgd lesson 3 --check my_shift.cpp
//
// shift_right passes every rank's data one step around the ring: afterwards rank r holds
// what rank r - 1 held (rank 0 what rank R - 1 held). As written it is correct, and it
// passes for small vectors; but every rank sends before it receives. Above the eager limit
// (64 KiB) a send waits until its receiver posts the receive, and here every rank is in
// send: the checker's vector of 2^18 floats (1 MiB) deadlocks, as it would under Open MPI.
// Make it work for every size without changing what it computes. Three ways (lesson 3):
// post the receive first with irecv; or send with isend, receive, then wait; or let even
// ranks send first and odd ranks receive first. With isend, `data` belongs to the send until
// its wait returns: receive into another buffer, and wait for every request. The checker
// fails a send whose buffer changed before its wait, or that was never waited for.
#include <algorithm>
#include <span>
#include <vector>

#include "core/comm/communicator.h"

void shift_right(dsgd::Communicator& comm, std::span<float> data) {
  const int world = comm.size(), rank = comm.rank();
  const int right = (rank + 1) % world, left = (rank - 1 + world) % world;
  std::vector<float> incoming(data.size());
  comm.send(data, right);     // waits for the right neighbour's recv above 64 KiB ...
  comm.recv(incoming, left);  // ... which is also still in its send
  std::copy(incoming.begin(), incoming.end(), data.begin());
}
