#include "cli/device_choice.h"

#include <fmt/format.h>

#include "cli/nccl_choice.h"
#include "cli/train_command.h"
#include "core/comm/byte_floats.h"
#include "core/comm/collectives.h"
#include "core/errors.h"
#ifdef DSGD_HAVE_CUDA
#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_device.h"
#endif
#ifdef DSGD_HAVE_MPI
#include "core/mpi/cuda_aware.h"
#include "core/mpi/mpi_session.h"
#endif

namespace dsgd::cli {
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
std::optional<cuda::NcclSetup> agree_on_nccl(Communicator& comm, NcclRequest request, int device) {
  std::string why_not;
  const NcclPeer mine{.gpu_uuid = cuda::device_uuid(device),
                      .loaded = !cuda::nccl_version(&why_not).empty()};
  if (!decide_nccl(request, gather_nccl_peers(comm, mine), comm.rank(), why_not))
    return std::nullopt;
  // The Communicator outlives the device (train() makes and drops the device), so the
  // probe may hold a reference to it.
  cuda::NcclSetup setup{
      .world = comm.size(), .rank = comm.rank(), .timeout = comm.timeout(), .failure = [&comm] {
        return comm.failure();
      }};
  std::vector<float> message(1 + (setup.id.size() + 1) / 2, 0.0f);  // {made, id...}
  std::string failure;
  if (comm.rank() == 0) {
    try {
      const std::vector<float> id = bytes_to_floats(cuda::nccl_unique_id());
      message[0] = 1.0f;
      std::copy(id.begin(), id.end(), message.begin() + 1);
    } catch (const cuda::CudaError& e) {
      failure = e.what();
    }
  }
  broadcast(comm, message, 0);
  if (!failure.empty()) throw cuda::CudaError(failure, "ncclGetUniqueId");
  if (message[0] != 1.0f)
    throw cuda::CudaError("rank 0 could not make an NCCL communicator id; see its error",
                          "ncclGetUniqueId");
  floats_to_bytes(std::span<const float>(message).subspan(1), setup.id);
  return setup;
}
#endif

}  // namespace

DeviceFactory make_device_factory(const TrainFlags& f, const TrainConfig& config) {
  if (f.device == "cpu") return {};
  const int index = parse_cuda_index(f.device);
#ifndef DSGD_HAVE_CUDA
  (void)index;
  (void)config;
  throw UsageError(
      fmt::format("--device {}: this dsgd was built without CUDA (no nvcc at configure time); use "
                  "--device cpu",
                  f.device));
#else
  std::string why;
  const int count = cuda::device_count(&why);
  if (count == 0)
    throw UsageError(fmt::format("--device {}: no usable CUDA device here ({}); use --device cpu",
                                 f.device, why));
  if (index >= count)
    throw UsageError(
        fmt::format("--device {}: this machine has {} CUDA device{} (cuda:0{}); "
                    "use --device cuda to spread ranks over them",
                    f.device, count, count == 1 ? "" : "s",
                    count == 1 ? "" : fmt::format("..cuda:{}", count - 1)));
  if (uses_mse(config.model))
    throw UsageError(fmt::format(
        "--device {} trains the classifiers (softmax, mlp:...); --model {} runs on --device cpu",
        f.device, config.model.str()));
  const bool mpi = f.backend == "mpi";
  const bool native = config.allreduce == Algorithm::native;
  const NcclRequest nccl = nccl_request(f.allreduce, mpi);
#ifndef DSGD_HAVE_NCCL
  if (nccl == NcclRequest::required)
    throw UsageError(
        "--allreduce nccl: this dsgd was built without NCCL (nccl.h not found at configure "
        "time); install NCCL and rebuild, or use --allreduce auto");
#endif
  return [index, count, mpi, native, nccl](Communicator& comm, const std::vector<int64_t>& sizes,
                                           const SgdOptions& sgd,
                                           int64_t extra) -> std::unique_ptr<ComputeDevice> {
    const int rank = comm.rank(), world = comm.size();
    int local = rank;  // simulated nodes: the node's index
    bool cuda_aware = false;
#ifdef DSGD_HAVE_MPI
    if (mpi) {
      const int from_env = mpi::local_rank_from_env();
      if (from_env >= 0) local = from_env;
      cuda_aware = native && mpi::cuda_aware();
    }
#endif
    cuda::CudaDeviceOptions options{.device =
                                        index >= 0 ? index : cuda::default_device(local, count)};
    // NCCL where asked for, or chosen by --allreduce auto on MPI ranks with a GPU each. One
    // rank: all_reduce is a no-op, the gradients can stay on the device. A CUDA-aware
    // MPI_Allreduce (--allreduce native) reads device memory itself. Otherwise: pinned host.
#ifdef DSGD_HAVE_NCCL
    if (nccl != NcclRequest::off) {
      if (auto setup = agree_on_nccl(comm, nccl, options.device)) {
        options.path = cuda::GradientPath::nccl;
        options.nccl = std::move(setup);
        return std::make_unique<cuda::CudaDevice>(options, sizes, sgd, extra);
      }
    }
#else
    (void)nccl;
#endif
    if (world == 1) {
      options.path = cuda::GradientPath::direct;
      options.sync_before_reduce = false;
    } else if (cuda_aware) {
      options.path = cuda::GradientPath::direct;
    }
    return std::make_unique<cuda::CudaDevice>(options, sizes, sgd, extra);
  };
#endif
}

std::string describe_device(const TrainFlags& f, int world) {
  if (f.device == "cpu") return "";
#ifdef DSGD_HAVE_CUDA
  const int count = cuda::device_count();
  const int index = f.device == "cuda" ? -1 : parse_cuda_index(f.device);
  if (f.backend == "mpi" && index < 0)
    return fmt::format("{}: each rank its local rank's GPU of {} per host", f.device, count);
  const int used = index >= 0 ? 1 : std::min(world, count);
  return fmt::format("{}: {} rank{} on {} GPU{} ({})", f.device, world, world == 1 ? "" : "s", used,
                     used == 1 ? "" : "s", cuda::device_name(index >= 0 ? index : 0));
#else
  return f.device;
#endif
}

}  // namespace dsgd::cli
