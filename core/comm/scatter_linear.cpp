// Direct scatter: the root sends row i of its (R, c) buffer straight to rank i, all sends
// in flight at once. R = world size, c = elements per rank.
// Cost: one step (the R-1 messages leave on different links at the same time); the root
// sends c floats, so on a real shared NIC the root's link is the bottleneck.
#include <cstring>
#include <vector>

#include "core/comm/collectives.h"

namespace dsgd {

void scatter_linear(Communicator& comm, std::span<const float> send, std::span<float> recv,
                    int root) {
  const int n = comm.size();
  const size_t c = recv.size();
  if (comm.rank() != root) {
    comm.recv(recv, root, collective_tag::kScatter);
    return;
  }
  std::vector<Request> pending;
  pending.reserve(n - 1);
  for (int dst = 0; dst < n; ++dst)
    if (dst != root)
      pending.push_back(comm.isend(send.subspan(dst * c, c), dst, collective_tag::kScatter));
  if (c) std::memmove(recv.data(), send.data() + root * c, c * sizeof(float));
  for (Request& p : pending)
    p.wait();
}

}  // namespace dsgd
