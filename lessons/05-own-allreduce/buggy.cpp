// Lesson 5: a buggy solution of the exercise, for the checker's tests and for students to
// debug: every chunk has n / R elements, so when R does not divide n the last n % R
// elements are never reduced. `dsgd lesson 5 --check` rejects it at R = 2, n = 1.
#include <span>
#include <vector>

#include "core/comm/communicator.h"

void my_all_reduce(dsgd::Communicator& comm, std::span<float> data) {
  const int world = comm.size(), rank = comm.rank();
  const size_t size = data.size() / world;  // BUG: drops the remainder
  auto chunk = [&](int c) {
    c = (c % world + world) % world;
    return data.subspan(c * size, size);
  };
  const int right = (rank + 1) % world, left = (rank - 1 + world) % world;
  std::vector<float> scratch(size);
  for (int s = 0; s < world - 1; ++s) {
    dsgd::Request sending = comm.isend(chunk(rank - s), right);
    comm.recv(scratch, left);
    comm.wait(sending);
    std::span<float> mine = chunk(rank - s - 1);
    for (size_t i = 0; i < size; ++i)
      mine[i] += scratch[i];
  }
  for (int s = 0; s < world - 1; ++s) {
    dsgd::Request sending = comm.isend(chunk(rank + 1 - s), right);
    comm.recv(chunk(rank - s), left);
    comm.wait(sending);
  }
}
