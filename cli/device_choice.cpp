#include "cli/device_choice.h"

#include <fmt/format.h>

#include "core/errors.h"
#ifdef DSGD_HAVE_CUDA
#include "core/cuda/device_factory.h"
#endif
#ifdef DSGD_HAVE_MPI
#include "core/mpi/cuda_aware.h"
#include "core/mpi/mpi_session.h"
#endif

namespace dsgd::cli {

#ifdef DSGD_HAVE_CUDA
namespace {

// What the CUDA devices need to know of the backend: MPI ranks find their index on the
// host in the launcher's environment and ask the library whether it reads device memory;
// simulated nodes are all on this host, numbered by rank.
cuda::DeviceRequest device_request(const sim::RunSpec& spec, const TrainConfig& config) {
  const bool mpi = spec.backend == sim::Backend::mpi;
  cuda::DeviceRequest r{.device = spec.device,
                        .nccl = cuda::nccl_request(sim::allreduce_name(spec), mpi),
                        .native_all_reduce = config.allreduce == Algorithm::native,
                        .ranks_on_many_hosts = mpi};
#ifdef DSGD_HAVE_MPI
  if (mpi) {
    r.local_rank = [](int rank) {
      const int from_env = mpi::local_rank_from_env();
      return from_env >= 0 ? from_env : rank;
    };
    r.cuda_aware = [] { return mpi::cuda_aware(); };
  }
#endif
  return r;
}

}  // namespace
#endif

DeviceFactory make_device_factory(const sim::RunSpec& spec, const TrainConfig& config) {
  if (spec.device == "cpu") return {};
#ifdef DSGD_HAVE_CUDA
  return cuda::make_device_factory(device_request(spec, config), config);
#else
  throw UsageError(
      fmt::format("--device {}: this dsgd was built without CUDA (no nvcc at configure time); use "
                  "--device cpu",
                  spec.device));
#endif
}

std::string describe_device(const sim::RunSpec& spec, int world) {
  if (spec.device == "cpu") return "";
#ifdef DSGD_HAVE_CUDA
  return cuda::describe_device(device_request(spec, TrainConfig{}), world);
#else
  return spec.device;
#endif
}

}  // namespace dsgd::cli
