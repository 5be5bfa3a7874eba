// Lesson 5: a solution of the exercise (exercise.cpp), the bandwidth-optimal ring
// all-reduce: reduce-scatter, then all-gather. `dsgd lesson 5 --check` accepts it.
// R = ranks, r = this rank, n = floats; chunk c is data[n*c/R, n*(c+1)/R).
#include <span>
#include <vector>

#include "core/comm/communicator.h"

void my_all_reduce(dsgd::Communicator& comm, std::span<float> data) {
  const int world = comm.size(), rank = comm.rank();
  const size_t n = data.size();
  if (world == 1) return;
  auto begin = [&](int c) { return n * static_cast<size_t>(c) / world; };
  auto chunk = [&](int c) {
    c = (c % world + world) % world;
    return data.subspan(begin(c), begin(c + 1) - begin(c));
  };
  const int right = (rank + 1) % world, left = (rank - 1 + world) % world;
  std::vector<float> scratch(n / world + 1);

  // Reduce-scatter: after step s, the chunk received holds the sum of s + 2 ranks.
  for (int s = 0; s < world - 1; ++s) {
    std::span<float> out = chunk(rank - s), mine = chunk(rank - s - 1);
    std::span<float> in(scratch.data(), mine.size());
    dsgd::Request sending = comm.isend(out, right);
    comm.recv(in, left);
    comm.wait(sending);
    for (size_t i = 0; i < mine.size(); ++i)
      mine[i] += in[i];
  }
  // All-gather: rank r starts with the finished chunk r + 1 and passes chunks on.
  for (int s = 0; s < world - 1; ++s) {
    dsgd::Request sending = comm.isend(chunk(rank + 1 - s), right);
    comm.recv(chunk(rank - s), left);
    comm.wait(sending);
  }
}
