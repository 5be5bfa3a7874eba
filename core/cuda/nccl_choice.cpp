#include "core/cuda/nccl_choice.h"

#include <fmt/format.h>

#include "core/comm/byte_floats.h"
#include "core/comm/collectives.h"
#include "core/errors.h"

namespace dsgd::cuda {

NcclRequest nccl_request(const std::string& allreduce, bool mpi_backend) {
  if (allreduce == "nccl") return NcclRequest::required;
  return allreduce == "auto" && mpi_backend ? NcclRequest::automatic : NcclRequest::off;
}

std::vector<NcclPeer> gather_nccl_peers(Communicator& comm, const NcclPeer& mine) {
  // One row per rank: the UUID's 16 bytes as 8 floats, then 1 for loaded.
  constexpr size_t kRow = 16 / 2 + 1;
  std::vector<float> row = bytes_to_floats(mine.gpu_uuid);
  row.push_back(mine.loaded ? 1.0f : 0.0f);
  std::vector<float> all(kRow * static_cast<size_t>(comm.size()));
  all_gather(comm, row, all);
  std::vector<NcclPeer> peers(static_cast<size_t>(comm.size()));
  for (size_t r = 0; r < peers.size(); ++r) {
    const std::span<const float> got(all.data() + r * kRow, kRow);
    floats_to_bytes(got.first(kRow - 1), peers[r].gpu_uuid);
    peers[r].loaded = got.back() == 1.0f;
  }
  return peers;
}

bool decide_nccl(NcclRequest request, const std::vector<NcclPeer>& peers, int my_rank,
                 const std::string& why_not_here) {
  if (request == NcclRequest::off) return false;
  const bool required = request == NcclRequest::required;
  if (!required && peers.size() < 2) return false;  // nothing to sum
  for (size_t r = 0; r < peers.size(); ++r) {
    if (peers[r].loaded) continue;
    if (!required) return false;
    throw UsageError(fmt::format(
        "--allreduce nccl: rank {} cannot load NCCL{}; install NCCL there, or use --allreduce "
        "auto",
        r,
        static_cast<int>(r) == my_rank && !why_not_here.empty() ? " (" + why_not_here + ")" : ""));
  }
  for (size_t a = 0; a < peers.size(); ++a)
    for (size_t b = a + 1; b < peers.size(); ++b) {
      if (peers[a].gpu_uuid != peers[b].gpu_uuid) continue;
      if (!required) return false;
      throw UsageError(
          fmt::format("--allreduce nccl: ranks {} and {} are on the same GPU, and NCCL needs a GPU "
                      "of its own for every rank; run at most one rank per GPU, or use "
                      "--allreduce auto",
                      a, b));
    }
  return true;
}

}  // namespace dsgd::cuda
