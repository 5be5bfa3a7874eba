// Whether the gradients' all_reduce goes through NCCL: every rank answers "which GPU am I
// on, and can I load libnccl?", the answers are gathered over the Communicator, and each
// rank reaches the same decision from the same list. NCCL needs a GPU of its own for every
// rank (it refuses two ranks on one GPU), and libnccl on every rank.
// Not CUDA code: the answers come in as bytes, so the CPU suite tests all of it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/comm/communicator.h"

namespace dsgd::cuda {

enum class NcclRequest {
  off,        // --allreduce naive, ring, ...: the Communicator sums
  automatic,  // --allreduce auto on MPI ranks: NCCL where every rank can use it
  required,   // --allreduce nccl: NCCL, or a usage error saying why not
};

// --allreduce and --backend as NcclRequest. Simulated nodes never pick NCCL by themselves:
// their gradients are meant to cross the simulated network.
NcclRequest nccl_request(const std::string& allreduce, bool mpi_backend);

struct NcclPeer {
  std::array<uint8_t, 16> gpu_uuid{};  // cudaDeviceProp::uuid of the rank's GPU
  bool loaded = false;                 // libnccl opened on this rank
};

// Every rank's NcclPeer, in rank order (an all_gather; every rank must call it).
std::vector<NcclPeer> gather_nccl_peers(Communicator& comm, const NcclPeer& mine);

// The decision from the gathered list, the same on every rank. `why_not_here`: this rank's
// reason when it could not load libnccl, for the message. `required` and impossible:
// UsageError naming the ranks and what to do. A world of one never needs it unless required.
bool decide_nccl(NcclRequest request, const std::vector<NcclPeer>& peers, int my_rank,
                 const std::string& why_not_here);

}  // namespace dsgd::cuda
