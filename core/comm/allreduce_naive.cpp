// Naive all-reduce: every rank sends its whole buffer to rank 0, which reduces in rank
// order and sends the result back to everyone. R = world size, S = bytes.
// Cost: 2(R-1) messages through rank 0, which sends and receives (R-1)*S bytes. Where
// every pair of ranks has its own link (the simulator's mesh), the R-1 messages each way
// overlap and it takes 2 steps of S; on a real NIC rank 0's link is the bottleneck, which
// is why the other algorithms exist and why automatic choice never picks this one.
#include <vector>

#include "core/comm/collectives.h"

namespace dsgd {

void all_reduce_naive(Communicator& comm, std::span<float> data, Reduction op) {
  const int n = comm.size();
  const int tag = collective_tag::kAllReduceNaive;
  if (comm.rank() != 0) {
    comm.send(data, 0, tag);
    comm.recv(data, 0, tag);
    return;
  }
  const std::span<float> incoming = comm.scratch(data.size());
  for (int src = 1; src < n; ++src) {  // rank order: the same sum on every run
    comm.recv(incoming, src, tag);
    reduce_into(data, incoming, op);
  }
  finish_reduce(data, op, n);
  std::vector<Request> sends;
  sends.reserve(n - 1);
  for (int dst = 1; dst < n; ++dst)
    sends.push_back(comm.isend(data, dst, tag));
  for (Request& s : sends)
    s.wait();
}

}  // namespace dsgd
