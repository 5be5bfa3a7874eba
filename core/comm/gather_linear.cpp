// Direct gather: every rank sends its piece straight to the root, which has a receive
// posted for each row of its (R, c) buffer at once. R = world size, c = elements per rank.
// Cost: one step (the R-1 messages travel on different links at the same time); the root
// receives c floats, so on a real shared NIC the root's link is the bottleneck.
#include <cstring>
#include <vector>

#include "core/comm/collectives.h"

namespace dsgd {

void gather_linear(Communicator& comm, std::span<const float> send, std::span<float> recv,
                   int root) {
  const int n = comm.size();
  const size_t c = send.size();
  if (comm.rank() != root) {
    comm.send(send, root, collective_tag::kGather);
    return;
  }
  std::vector<Request> pending;
  pending.reserve(n - 1);
  for (int src = 0; src < n; ++src)
    if (src != root)
      pending.push_back(comm.irecv(recv.subspan(src * c, c), src, collective_tag::kGather));
  if (c) std::memmove(recv.data() + root * c, send.data(), c * sizeof(float));
  for (Request& p : pending)
    p.wait();
}

}  // namespace dsgd
