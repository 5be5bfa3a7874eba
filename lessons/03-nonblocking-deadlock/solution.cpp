// Lesson 3: a solution of the exercise (exercise.cpp). The send is posted without waiting
// for it (isend), so every rank reaches its recv; then the send is waited for.
// `dsgd lesson 3 --check` accepts it.
#include <algorithm>
#include <span>
#include <vector>

#include "core/comm/communicator.h"

void shift_right(dsgd::Communicator& comm, std::span<float> data) {
  const int world = comm.size(), rank = comm.rank();
  const int right = (rank + 1) % world, left = (rank - 1 + world) % world;
  std::vector<float> incoming(data.size());
  dsgd::Request sending = comm.isend(data, right);
  comm.recv(incoming, left);
  comm.wait(sending);  // data may change only once the send is done
  std::copy(incoming.begin(), incoming.end(), data.begin());
}
