// Binomial-tree reduce, the mirror image of broadcast_binomial. R = world size, v = this
// rank relative to the root. Rank v receives from v + 2^k for every 2^k below its lowest
// set bit (smallest subtree first: it is ready first), reducing each into acc, then sends
// acc to v minus that bit. The root ends with every rank's contribution; the critical path
// is max popcount(v < R) messages, as in broadcast.
#include <vector>

#include "core/comm/collectives.h"

namespace dsgd {

void reduce_binomial(Communicator& comm, std::span<float> acc, Reduction op, int root, int tag) {
  const int n = comm.size();
  const int v = (comm.rank() - root + n) % n;
  std::span<float> incoming;  // scratch slot 0: reduce() keeps a non-root's copy in slot 1
  for (int mask = 1; mask < n; mask <<= 1) {
    if (v & mask) {
      comm.send(acc, (v - mask + root) % n, tag);
      return;
    }
    if (v + mask < n) {
      if (incoming.empty()) incoming = comm.scratch(acc.size());
      comm.recv(incoming, (v + mask + root) % n, tag);
      reduce_into(acc, incoming, op);
    }
  }
}

}  // namespace dsgd
