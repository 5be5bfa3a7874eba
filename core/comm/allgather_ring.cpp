// Ring all-gather: R-1 steps around the ring r -> r+1; in step s rank r forwards row
// (r - s) and receives row (r - s - 1) from the left, straight into place.
// R = world size, c = elements per rank; recv is (R, c).
// Cost: R-1 steps of c floats each: every rank sends (R-1)/R of the (R, c) result,
// the least any all-gather can send.
#include <cstring>

#include "core/comm/collectives.h"

namespace dsgd {

void all_gather_ring(Communicator& comm, std::span<const float> send, std::span<float> recv) {
  const int n = comm.size();
  const int r = comm.rank();
  const size_t c = send.size();
  const int right = (r + 1) % n, left = (r - 1 + n) % n;
  const int tag = collective_tag::kAllGather;
  auto row = [&](int i) { return recv.subspan(((i % n + n) % n) * c, c); };
  if (c && send.data() != row(r).data())
    std::memmove(row(r).data(), send.data(), c * sizeof(float));
  // Row (r - s) is complete before step s (it arrived in step s-1, or is our own), and the
  // row being received differs from the one being sent, so one step never overwrites what
  // it still sends; each send is waited before the next step.
  for (int s = 0; s < n - 1; ++s) {
    Request sent = comm.isend(row(r - s), right, tag);
    comm.recv(row(r - s - 1), left, tag);
    sent.wait();
  }
}

}  // namespace dsgd
