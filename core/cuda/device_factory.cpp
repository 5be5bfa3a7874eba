#include "core/cuda/device_factory.h"

#include <fmt/format.h>

#include "core/comm/byte_floats.h"
#include "core/comm/collectives.h"
#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_device.h"
#include "core/errors.h"

namespace dsgd::cuda {
namespace {

// "cuda" -> -1 (each rank its local rank's GPU), "cuda:K" -> K; UsageError otherwise.
int parse_cuda_index(const std::string& device) {
  if (device == "cuda") return -1;
  const std::string digits = device.rfind("cuda:", 0) == 0 ? device.substr(5) : "";
  const bool ok = !digits.empty() && digits.size() <= 4 &&
                  digits.find_first_not_of("0123456789") == std::string::npos;
  if (!ok)
    throw UsageError(
        fmt::format("--device {}: use --device cpu, --device cuda (each rank its local rank's "
                    "GPU) or --device cuda:K",
                    device));
  return std::stoi(digits);
}

#ifdef DSGD_HAVE_NCCL
// Every rank: whether NCCL is to sum the gradients (decide_nccl over every rank's GPU and
// libnccl), and if so the id of the communicator, made by rank 0 and broadcast with a flag
// saying it could make one, so a failure there ends every rank at once rather than by
// timeout.
std::optional<NcclSetup> agree_on_nccl(Communicator& comm, NcclRequest request, int device) {
  std::string why_not;
  const NcclPeer mine{.gpu_uuid = device_uuid(device), .loaded = !nccl_version(&why_not).empty()};
  if (!decide_nccl(request, gather_nccl_peers(comm, mine), comm.rank(), why_not))
    return std::nullopt;
  // The Communicator outlives the device (train() makes and drops the device), so the
  // probe may hold a reference to it.
  NcclSetup setup{
      .world = comm.size(), .rank = comm.rank(), .timeout = comm.timeout(), .failure = [&comm] {
        return comm.failure();
      }};
  std::vector<float> message(1 + (setup.id.size() + 1) / 2, 0.0f);  // {made, id...}
  std::string failure;
  if (comm.rank() == 0) {
    try {
      const std::vector<float> id = bytes_to_floats(nccl_unique_id());
      message[0] = 1.0f;
      std::copy(id.begin(), id.end(), message.begin() + 1);
    } catch (const CudaError& e) {
      failure = e.what();
    }
  }
  broadcast(comm, message, 0);
  if (!failure.empty()) throw CudaError(failure, "ncclGetUniqueId");
  if (message[0] != 1.0f)
    throw CudaError("rank 0 could not make an NCCL communicator id; see its error",
                    "ncclGetUniqueId");
  floats_to_bytes(std::span<const float>(message).subspan(1), setup.id);
  return setup;
}
#endif

// UsageError unless `index` (-1: each rank its local rank's) names a GPU of this machine
// and the model is one the device trains.
int checked_device_count(const std::string& device, int index, const TrainConfig& config) {
  std::string why;
  const int count = device_count(&why);
  if (count == 0)
    throw UsageError(
        fmt::format("--device {}: no usable CUDA device here ({}); use --device cpu", device, why));
  if (index >= count)
    throw UsageError(
        fmt::format("--device {}: this machine has {} CUDA device{} (cuda:0{}); "
                    "use --device cuda to spread ranks over them",
                    device, count, count == 1 ? "" : "s",
                    count == 1 ? "" : fmt::format("..cuda:{}", count - 1)));
  if (uses_mse(config.model))
    throw UsageError(fmt::format(
        "--device {} trains the classifiers (softmax, mlp:...); --model {} runs on --device cpu",
        device, config.model.str()));
  return count;
}

// NCCL where asked for, or chosen by --allreduce auto on MPI ranks with a GPU each: the
// options with the communicator to join, or nothing (the other paths).
bool try_nccl(Communicator& comm, NcclRequest request, CudaDeviceOptions& options) {
#ifdef DSGD_HAVE_NCCL
  if (request == NcclRequest::off) return false;
  auto setup = agree_on_nccl(comm, request, options.device);
  if (!setup) return false;
  options.path = GradientPath::nccl;
  options.nccl = std::move(setup);
  return true;
#else
  return false;
#endif
}

}  // namespace

DeviceFactory make_device_factory(const DeviceRequest& request, const TrainConfig& config) {
  const int index = parse_cuda_index(request.device);
  const int count = checked_device_count(request.device, index, config);
#ifndef DSGD_HAVE_NCCL
  if (request.nccl == NcclRequest::required)
    throw UsageError(
        "--allreduce nccl: this dsgd was built without NCCL (nccl.h not found at configure "
        "time); install NCCL and rebuild, or use --allreduce auto");
#endif
  return [request, index, count](Communicator& comm, const std::vector<int64_t>& sizes,
                                 const SgdOptions& sgd,
                                 int64_t extra) -> std::unique_ptr<ComputeDevice> {
    const int local = request.local_rank ? request.local_rank(comm.rank()) : comm.rank();
    CudaDeviceOptions options{.device = index >= 0 ? index : default_device(local, count)};
    // One rank: all_reduce is a no-op, the gradients can stay on the device. A CUDA-aware
    // MPI_Allreduce (--allreduce native) reads device memory itself. Otherwise: pinned host.
    if (!try_nccl(comm, request.nccl, options)) {
      const bool cuda_aware =
          request.native_all_reduce && request.cuda_aware && request.cuda_aware();
      if (comm.size() == 1) {
        options.path = GradientPath::direct;
        options.sync_before_reduce = false;
      } else if (cuda_aware) {
        options.path = GradientPath::direct;
      }
    }
    return std::make_unique<CudaDevice>(options, sizes, sgd, extra);
  };
}

std::string describe_device(const DeviceRequest& request, int world) {
  const int count = device_count();
  const int index = parse_cuda_index(request.device);
  if (request.ranks_on_many_hosts && index < 0)
    return fmt::format("{}: each rank its local rank's GPU of {} per host", request.device, count);
  const int used = index >= 0 ? 1 : std::min(world, count);
  return fmt::format("{}: {} rank{} on {} GPU{} ({})", request.device, world, world == 1 ? "" : "s",
                     used, used == 1 ? "" : "s", device_name(index >= 0 ? index : 0));
}

}  // namespace dsgd::cuda
