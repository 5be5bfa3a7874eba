// Binomial-tree broadcast. R = world size, v = this rank relative to the root
// ((r - root) mod R). Rank v receives from v minus its lowest set bit, then sends to
// v + 2^k for every 2^k below that bit: R-1 messages, and rank v is popcount(v) hops
// from the root, so the deepest rank is max popcount(v < R) <= ceil(log2 R) hops away.
#include <vector>

#include "core/comm/collectives.h"

namespace dsgd {

void broadcast_binomial(Communicator& comm, std::span<float> data, int root, int tag) {
  const int n = comm.size();
  const int v = (comm.rank() - root + n) % n;
  int mask = 1;
  while (mask < n) {
    if (v & mask) {
      comm.recv(data, (v - mask + root) % n, tag);
      break;
    }
    mask <<= 1;
  }
  // Largest subtree first: it has the longest way to go. data is not modified from here
  // on, so every child may be sent the same buffer. Non-blocking, as MPI libraries send to
  // the children: a blocking send above the eager limit would wait for each child's receive
  // before starting the next, one hop per child.
  std::vector<Request> sends;
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (v + mask < n) sends.push_back(comm.isend(data, (v + mask + root) % n, tag));
  for (Request& s : sends)
    s.wait();
}

}  // namespace dsgd
