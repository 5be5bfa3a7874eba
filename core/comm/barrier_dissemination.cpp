// Dissemination barrier (Hensgen, Finkel and Manber): in round k rank r signals r + 2^k
// and waits for r - 2^k. R = world size. After ceil(log2 R) rounds every rank has
// (transitively) heard from every other, so none leaves before all have entered.
#include "core/comm/collectives.h"

namespace dsgd {

void barrier_dissemination(Communicator& comm) {
  const int n = comm.size();
  const int r = comm.rank();
  for (int dist = 1; dist < n; dist <<= 1) {
    Request sent = comm.isend({}, (r + dist) % n, collective_tag::kBarrier);
    comm.recv({}, (r - dist + n) % n, collective_tag::kBarrier);
    sent.wait();
  }
}

}  // namespace dsgd
