// CudaDevice: one rank's ComputeDevice on a CUDA GPU. The training data live on the device
// (uploaded once), each step copies only the row indices in, gathers rows with a kernel,
// runs CudaMlp and leaves the gradient buffer where the all_reduce reads it: pinned host
// memory for the socket backend and plain MPI (copied layer by layer on a second stream
// while the lower layers still compute), or device memory for a CUDA-aware MPI or a world
// of one; or NCCL sums them on the GPUs (every rank on a GPU of its own). Also: how many
// devices there are, which one a rank takes, and its UUID.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/cuda/cuda_mlp.h"
#include "core/train/device.h"
#ifdef DSGD_HAVE_NCCL
#include "core/cuda/nccl.h"
#endif

namespace dsgd::cuda {

// Visible CUDA devices; 0 when there is none or no usable driver (why_none says which).
int device_count(std::string* why_none = nullptr);
// "NVIDIA H200", or "cuda:K" when the name cannot be read.
std::string device_name(int index);
// The device of a rank that asked for plain "cuda": its local rank modulo the device count,
// so the ranks of one host spread over its GPUs and several may share one.
int default_device(int local_rank, int count);
// The GPU's UUID (the same for every process that sees it): tells whether two ranks, maybe
// in different processes with different CUDA_VISIBLE_DEVICES, share one GPU.
std::array<uint8_t, 16> device_uuid(int index);

enum class GradientPath {
  staged,  // through pinned host memory: any Communicator
  direct,  // device memory: a CUDA-aware MPI_Allreduce, or one rank (no all_reduce at all)
  nccl,    // device memory, summed by NCCL (CudaDevice::all_reduce)
};

#ifdef DSGD_HAVE_NCCL
struct NcclSetup {  // the communicator a rank joins (GradientPath::nccl)
  NcclId id{};
  int world = 1, rank = 0;
  std::chrono::milliseconds timeout{30000};
  NcclComm::FailureProbe failure;  // the backend's Communicator::failure()
};
#endif

struct CudaDeviceOptions {
  int device = 0;  // cudaSetDevice index
  GradientPath path = GradientPath::staged;
  bool sync_before_reduce = true;  // direct, nccl: wait for the gradients first
#ifdef DSGD_HAVE_NCCL
  std::optional<NcclSetup> nccl;  // GradientPath::nccl
#endif
};

class CudaDevice : public ComputeDevice {
 public:
  CudaDevice(const CudaDeviceOptions& options, const std::vector<int64_t>& sizes,
             const SgdOptions& sgd, int64_t extra_slots);
  ~CudaDevice() override;

  std::string name() const override;
  void load_data(const Dataset& data) override;
  void set_params(std::span<const float> values) override;
  void get_params(std::span<float> values) override;
  void set_momentum(std::span<const float> values) override;
  bool get_momentum(std::span<float> values) override;
  std::span<float> gradients(std::span<const int64_t> rows, float grad_scale) override;
  std::string gradient_reducer() const override;
  void reduce_gradients(Communicator& comm, std::span<float> grads, Algorithm algorithm) override;
  void update(std::span<float> extra) override;
  LossSum evaluate_test(int64_t begin, int64_t end) override;

  CudaMlp& mlp() { return *mlp_; }

 private:
  struct Resident {                // one split on the device
    DeviceBuffer<float> x;         // (N, D)
    DeviceBuffer<int32_t> labels;  // (N)
    int64_t rows = 0;
  };
  void upload(Resident& r, const Split& split, const char* which, int64_t classes);
  void select() const;  // cudaSetDevice: each call may come on any thread of the rank

  CudaDeviceOptions options_;
  int64_t extra_;
  std::unique_ptr<Stream> stream_, copy_stream_;  // compute; device-to-host copies
  std::unique_ptr<CudaMlp> mlp_;
  std::unique_ptr<CudaSgd> sgd_;
  std::vector<std::unique_ptr<Event>> layer_done_;  // per layer: its gradients are written
  Resident train_, test_;
  int64_t features_ = 0;
  PinnedBuffer<int64_t> rows_host_;     // (n) indices of this step, staged
  DeviceBuffer<int64_t> rows_;          // (n)
  DeviceBuffer<float> batch_x_;         // (n, D)
  DeviceBuffer<int32_t> batch_labels_;  // (n)
  PinnedBuffer<float> host_grads_;      // (P + E) staged gradients
  PinnedBuffer<float> host_extra_;      // (E) direct path: the reduced slots
  DeviceBuffer<double> eval_acc_;       // (2)
  PinnedBuffer<double> host_eval_;      // (2)
#ifdef DSGD_HAVE_NCCL
  std::unique_ptr<NcclComm> nccl_;  // last: leaves before the buffers it summed are freed
  std::string nccl_name_;
#endif
};

}  // namespace dsgd::cuda
