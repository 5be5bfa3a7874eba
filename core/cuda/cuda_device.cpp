// Notation: N = rows of a split, D = features, n = this rank's rows in a step,
// P = parameters, E = extra gradient slots, L = Linear layers.
#include "core/cuda/cuda_device.h"

#include "core/comm/collective_scope.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "core/errors.h"

namespace dsgd::cuda {

int device_count(std::string* why_none) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    if (why_none)
      *why_none = fmt::format("{} ({})", cudaGetErrorString(status), cudaGetErrorName(status));
    cudaGetLastError();  // clear it: it is an answer, not a failure
    return 0;
  }
  if (count == 0 && why_none) *why_none = "no CUDA device is visible";
  return count;
}

std::string device_name(int index) {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, index) != cudaSuccess) return fmt::format("cuda:{}", index);
  return prop.name;
}

int default_device(int local_rank, int count) {
  return count <= 0 ? 0 : std::max(local_rank, 0) % count;
}

std::array<uint8_t, 16> device_uuid(int index) {
  cudaDeviceProp prop{};
  DSGD_CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  std::array<uint8_t, 16> uuid;
  std::memcpy(uuid.data(), prop.uuid.bytes, uuid.size());
  return uuid;
}

CudaDevice::CudaDevice(const CudaDeviceOptions& options, const std::vector<int64_t>& sizes,
                       const SgdOptions& sgd, int64_t extra_slots)
    : options_(options), extra_(extra_slots) {
  select();
  stream_ = std::make_unique<Stream>();
  copy_stream_ = std::make_unique<Stream>();
  mlp_ = std::make_unique<CudaMlp>(sizes, extra_slots, stream_->get());
  sgd_ = std::make_unique<CudaSgd>(sgd, mlp_->num_params());
  for (int64_t l = 0; l < mlp_->num_layers(); ++l)
    layer_done_.push_back(std::make_unique<Event>());
  if (options_.path == GradientPath::staged)
    host_grads_.reserve(static_cast<size_t>(mlp_->grad_buffer_size()));
  host_extra_.reserve(static_cast<size_t>(extra_slots));
  eval_acc_.reserve(2);
  host_eval_.reserve(2);
  if (options_.path == GradientPath::nccl) {
#ifdef DSGD_HAVE_NCCL
    if (!options_.nccl)
      throw std::invalid_argument("CudaDevice: GradientPath::nccl without an NcclSetup");
    const NcclSetup& n = *options_.nccl;
    nccl_ = std::make_unique<NcclComm>(n.id, n.world, n.rank, n.timeout, n.failure);
    nccl_name_ = "NCCL " + nccl_version();
#else
    throw std::invalid_argument("CudaDevice: GradientPath::nccl in a build without NCCL");
#endif
  }
}

CudaDevice::~CudaDevice() {
  // The members free on this device; nothing may still be using them.
  if (cudaSetDevice(options_.device) == cudaSuccess) cudaDeviceSynchronize();
}

void CudaDevice::select() const {
  DSGD_CUDA_CHECK(cudaSetDevice(options_.device));
}

std::string CudaDevice::name() const {
  return fmt::format("cuda:{} ({})", options_.device, device_name(options_.device));
}

void CudaDevice::upload(Resident& r, const Split& split, const char* which, int64_t classes) {
  const int64_t rows = split.size();
  if (static_cast<int64_t>(split.labels.size()) != rows)
    throw UsageError(
        "--device cuda trains classifiers (softmax, mlp); this data set has no class labels: "
        "use --device cpu");
  for (int64_t i = 0; i < rows; ++i)
    if (split.labels[i] < 0 || split.labels[i] >= classes)
      throw DataError(fmt::format(
          "label {} (sample {} of the {} split) is outside 0..{}: the model has {} outputs; "
          "check that --data and --model agree",
          split.labels[i], i, which, classes - 1, classes));
  r.rows = rows;
  if (rows == 0) return;
  r.x.reserve(static_cast<size_t>(rows * features_));
  r.labels.reserve(static_cast<size_t>(rows));
  // Pageable host memory: a one-off copy, synchronous before the data are used.
  DSGD_CUDA_CHECK(cudaMemcpyAsync(r.x.data(), split.x.data(),
                                  static_cast<size_t>(rows * features_) * sizeof(float),
                                  cudaMemcpyHostToDevice, stream_->get()));
  DSGD_CUDA_CHECK(cudaMemcpyAsync(r.labels.data(), split.labels.data(),
                                  static_cast<size_t>(rows) * sizeof(int32_t),
                                  cudaMemcpyHostToDevice, stream_->get()));
  stream_->synchronize();
}

void CudaDevice::load_data(const Dataset& data) {
  select();
  if (data.features != mlp_->sizes().front() || data.classes != mlp_->sizes().back())
    throw std::invalid_argument(fmt::format(
        "CudaDevice::load_data: data have {} features and {} classes, the model {} and {}",
        data.features, data.classes, mlp_->sizes().front(), mlp_->sizes().back()));
  features_ = data.features;
  upload(train_, data.train, "train", data.classes);
  upload(test_, data.test, "test", data.classes);
}

void CudaDevice::set_params(std::span<const float> values) {
  select();
  if (static_cast<int64_t>(values.size()) != mlp_->num_params())
    throw std::invalid_argument("CudaDevice::set_params: wrong number of values");
  DSGD_CUDA_CHECK(cudaMemcpyAsync(mlp_->values(), values.data(), values.size_bytes(),
                                  cudaMemcpyHostToDevice, stream_->get()));
  stream_->synchronize();
}

void CudaDevice::get_params(std::span<float> values) {
  select();
  if (static_cast<int64_t>(values.size()) != mlp_->num_params())
    throw std::invalid_argument("CudaDevice::get_params: wrong number of values");
  DSGD_CUDA_CHECK(cudaMemcpyAsync(values.data(), mlp_->values(), values.size_bytes(),
                                  cudaMemcpyDeviceToHost, stream_->get()));
  stream_->synchronize();
}

void CudaDevice::set_momentum(std::span<const float> values) {
  select();
  if (!sgd_->momentum_buffer()) return;  // momentum 0: Sgd::set_momentum_buffer refused it
  if (static_cast<int64_t>(values.size()) != mlp_->num_params())
    throw std::invalid_argument("CudaDevice::set_momentum: wrong number of values");
  DSGD_CUDA_CHECK(cudaMemcpyAsync(sgd_->momentum_buffer(), values.data(), values.size_bytes(),
                                  cudaMemcpyHostToDevice, stream_->get()));
  stream_->synchronize();
  sgd_->mark_momentum_buffer();
}

bool CudaDevice::get_momentum(std::span<float> values) {
  select();
  if (!sgd_->has_momentum_buffer()) return false;
  if (static_cast<int64_t>(values.size()) != mlp_->num_params())
    throw std::invalid_argument("CudaDevice::get_momentum: wrong number of values");
  DSGD_CUDA_CHECK(cudaMemcpyAsync(values.data(), sgd_->momentum_buffer(), values.size_bytes(),
                                  cudaMemcpyDeviceToHost, stream_->get()));
  stream_->synchronize();
  return true;
}

std::span<float> CudaDevice::gradients(std::span<const int64_t> rows, float grad_scale) {
  select();
  const int64_t n = static_cast<int64_t>(rows.size());
  const int64_t total = mlp_->grad_buffer_size();  // P + E
  cudaStream_t s = stream_->get();
  const bool staged = options_.path == GradientPath::staged;
  // The copy stream starts a layer's copy once the compute stream has written it, so the
  // top layers' gradients cross PCIe while the lower layers' GEMMs run.
  auto copy_layer = [&](int64_t l) {
    if (!staged) return;
    const int64_t begin = mlp_->layer_offset(l);
    const int64_t end = l + 1 == mlp_->num_layers() ? total : begin + mlp_->layer_count(l);
    DSGD_CUDA_CHECK(cudaEventRecord(layer_done_[l]->get(), s));
    DSGD_CUDA_CHECK(cudaStreamWaitEvent(copy_stream_->get(), layer_done_[l]->get(), 0));
    DSGD_CUDA_CHECK(cudaMemcpyAsync(host_grads_.data() + begin, mlp_->grad_buffer() + begin,
                                    static_cast<size_t>(end - begin) * sizeof(float),
                                    cudaMemcpyDeviceToHost, copy_stream_->get()));
  };
  if (n == 0) {  // a rank with no rows this step contributes zeros
    mlp_->zero_grad();
    for (int64_t l = mlp_->num_layers() - 1; l >= 0; --l)
      copy_layer(l);
  } else {
    if (train_.rows == 0) throw std::logic_error("CudaDevice::gradients before load_data");
    rows_host_.reserve(static_cast<size_t>(n));
    rows_.reserve(static_cast<size_t>(n));
    batch_x_.reserve(static_cast<size_t>(n * features_));
    batch_labels_.reserve(static_cast<size_t>(n));
    // The previous step's copy of rows_host_ was waited for by that step's synchronisation.
    std::memcpy(rows_host_.data(), rows.data(), rows.size_bytes());
    DSGD_CUDA_CHECK(cudaMemcpyAsync(rows_.data(), rows_host_.data(), rows.size_bytes(),
                                    cudaMemcpyHostToDevice, s));
    DSGD_CUDA_CHECK(launch_gather_rows(train_.x.data(), train_.labels.data(), rows_.data(), n,
                                       features_, batch_x_.data(), batch_labels_.data(), s));
    mlp_->forward(batch_x_.data(), n);
    mlp_->backward(batch_x_.data(), batch_labels_.data(), n, grad_scale, copy_layer);
  }
  if (staged) {
    copy_stream_->synchronize();
    return {host_grads_.data(), static_cast<size_t>(total)};
  }
  // Direct: a CUDA-aware MPI reads the buffer from its own stream, so wait for it here.
  // With one rank nothing reads it before update(), which runs on this same stream. NCCL
  // would queue behind the backward on the same stream; the wait keeps the step's compute
  // and communication times apart in the metrics and the trace.
  if (options_.sync_before_reduce) stream_->synchronize();
  return {mlp_->grad_buffer(), static_cast<size_t>(total)};
}

std::string CudaDevice::gradient_reducer() const {
#ifdef DSGD_HAVE_NCCL
  return nccl_name_;
#else
  return "";
#endif
}

void CudaDevice::reduce_gradients(Communicator& comm, std::span<float> grads, Algorithm algorithm) {
#ifdef DSGD_HAVE_NCCL
  if (nccl_) {
    // No message crosses the Communicator; the trace still shows the all_reduce.
    CollectiveScope scope(comm, "all_reduce", grads.size_bytes());
    select();
    nccl_->all_reduce_sum(grads.data(), grads.size(), stream_->get());
    return;
  }
#endif
  ComputeDevice::reduce_gradients(comm, grads, algorithm);
}

void CudaDevice::update(std::span<float> extra) {
  select();
  const int64_t p = mlp_->num_params();
  cudaStream_t s = stream_->get();
  if (static_cast<int64_t>(extra.size()) != extra_)
    throw std::invalid_argument("CudaDevice::update: wrong number of extra slots");
  if (options_.path == GradientPath::staged) {
    // The reduced gradients go back in; the next step's device-to-host copies wait for
    // events recorded after this copy on the same stream, so they cannot overwrite it early.
    DSGD_CUDA_CHECK(cudaMemcpyAsync(mlp_->grad_buffer(), host_grads_.data(),
                                    static_cast<size_t>(p) * sizeof(float), cudaMemcpyHostToDevice,
                                    s));
    sgd_->step(mlp_->values(), mlp_->grad_buffer(), s);
    std::copy_n(host_grads_.data() + p, extra_, extra.begin());
    return;
  }
  sgd_->step(mlp_->values(), mlp_->grad_buffer(), s);
  DSGD_CUDA_CHECK(cudaMemcpyAsync(host_extra_.data(), mlp_->grad_buffer() + p,
                                  static_cast<size_t>(extra_) * sizeof(float),
                                  cudaMemcpyDeviceToHost, s));
  stream_->synchronize();
  std::copy_n(host_extra_.data(), extra_, extra.begin());
}

LossSum CudaDevice::evaluate_test(int64_t begin, int64_t end) {
  select();
  cudaStream_t s = stream_->get();
  DSGD_CUDA_CHECK(cudaMemsetAsync(eval_acc_.data(), 0, 2 * sizeof(double), s));
  constexpr int64_t kChunk = 8192;  // rows per forward: bounds the workspace
  for (int64_t lo = std::max<int64_t>(begin, 0); lo < std::min(end, test_.rows); lo += kChunk) {
    const int64_t hi = std::min({end, test_.rows, lo + kChunk});
    mlp_->evaluate(test_.x.data() + lo * features_, test_.labels.data() + lo, hi - lo,
                   eval_acc_.data());
  }
  DSGD_CUDA_CHECK(cudaMemcpyAsync(host_eval_.data(), eval_acc_.data(), 2 * sizeof(double),
                                  cudaMemcpyDeviceToHost, s));
  stream_->synchronize();
  return {.loss = host_eval_.data()[0], .correct = static_cast<int64_t>(host_eval_.data()[1])};
}

}  // namespace dsgd::cuda
