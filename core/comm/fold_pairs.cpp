#include "core/comm/fold_pairs.h"

namespace dsgd {

bool fold_in(Communicator& comm, const HalvingDoubling& h, std::span<float> data, int tag,
             Reduction op) {
  const int r = comm.rank();
  if (r >= 2 * h.extra) return true;
  if (h.core_rank(r) < 0) {
    comm.send(data, r + 1, tag);
    comm.recv(data, r + 1, tag);
    return false;
  }
  const std::span<float> incoming = comm.scratch(data.size());
  comm.recv(incoming, r - 1, tag);
  reduce_into(data, incoming, op);
  return true;
}

void unfold(Communicator& comm, const HalvingDoubling& h, std::span<const float> data, int tag) {
  const int r = comm.rank();
  if (r < 2 * h.extra) comm.send(data, r - 1, tag);
}

}  // namespace dsgd
