// n = this rank's rows, D = features, O = outputs, P = parameters.
#include "core/train/cpu_device.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "core/data/sampler.h"
#include "core/nn/loss.h"

namespace dsgd {

// Buffers for one slice of rows.
struct CpuDevice::Batch {
  std::vector<float> x;           // (n, D)
  std::vector<int32_t> labels;    // (n)
  std::vector<float> targets;     // (n) regression targets
  std::vector<float> mse_target;  // (n, O) one-hot labels or targets, for MSE
  std::vector<float> dout;        // (n, O)

  void load(const Dataset& data, const Split& split, std::span<const int64_t> idx) {
    const size_t n = idx.size();
    x.resize(n * data.features);
    const bool classify = data.task == Task::classification;
    labels.resize(classify ? n : 0);
    targets.resize(classify ? 0 : n);
    gather_rows(split, idx, x, labels, targets);
  }

  // Loss summed over the rows; writes dout scaled by grad_scale when want_grad.
  LossSum loss(const Dataset& data, std::span<const float> out, int64_t n, int64_t o, bool mse_loss,
               float grad_scale, bool want_grad) {
    float* d = nullptr;
    if (want_grad) {
      dout.resize(n * o);
      d = dout.data();
    }
    if (!mse_loss) return softmax_cross_entropy(out.data(), labels.data(), n, o, grad_scale, d);
    mse_target.assign(n * o, 0.0f);
    if (data.task == Task::classification) {
      for (int64_t i = 0; i < n; ++i)
        mse_target[i * o + labels[i]] = 1.0f;
    } else {
      std::copy(targets.begin(), targets.end(), mse_target.begin());
    }
    return mse(out.data(), mse_target.data(), n, o, grad_scale, d);
  }
};

CpuDevice::CpuDevice(Model& model, Sgd& sgd, bool mse_loss)
    : model_(model), sgd_(sgd), mse_(mse_loss), batch_(std::make_unique<Batch>()) {}
CpuDevice::~CpuDevice() = default;

void CpuDevice::load_data(const Dataset& data) {
  data_ = &data;
}

void CpuDevice::set_params(std::span<const float> values) {
  if (values.data() != model_.values().data())
    std::copy(values.begin(), values.end(), model_.values().begin());
}

void CpuDevice::get_params(std::span<float> values) {
  if (values.data() != model_.values().data())
    std::copy(model_.values().begin(), model_.values().end(), values.begin());
}

void CpuDevice::set_momentum(std::span<const float> values) {
  if (values.data() != sgd_.momentum_buffer().data()) sgd_.set_momentum_buffer(values, "momentum");
}

bool CpuDevice::get_momentum(std::span<float> values) {
  if (!sgd_.has_momentum_buffer()) return false;
  const std::span<const float> buffer = sgd_.momentum_buffer();
  if (values.data() != buffer.data()) std::copy(buffer.begin(), buffer.end(), values.begin());
  return true;
}

std::span<float> CpuDevice::gradients(std::span<const int64_t> rows, float grad_scale) {
  return gradients_by_layer(rows, grad_scale, {});
}

std::span<float> CpuDevice::gradients_by_layer(std::span<const int64_t> rows, float grad_scale,
                                               const LayersDone& layers_done) {
  const int64_t n = static_cast<int64_t>(rows.size()), p = model_.num_params();
  const int64_t o = model_.outputs();
  model_.zero_grad();
  std::span<float> grads = model_.grad_buffer();
  if (n == 0) {
    if (layers_done) layers_done(0, grads);
    return grads;
  }
  batch_->load(*data_, data_->train, rows);
  auto out = model_.forward(batch_->x.data(), n);
  const LossSum s = batch_->loss(*data_, out, n, o, mse_, grad_scale, true);
  grads[p] = static_cast<float>(s.loss);  // before backward: they ride in the first bucket
  grads[p + 1] = static_cast<float>(s.correct);
  Model::LayerDone layer_done;
  if (layers_done) layer_done = [&](int64_t layer) { layers_done(layer, grads); };
  model_.backward(batch_->x.data(), batch_->dout.data(), n, layer_done);
  return grads;
}

void CpuDevice::update(std::span<float> extra) {
  const std::span<float> grads = model_.grad_buffer();
  const size_t p = static_cast<size_t>(model_.num_params());
  if (extra.size() != grads.size() - p)
    throw std::invalid_argument("CpuDevice::update: wrong number of extra slots");
  sgd_.step(model_.values(), model_.grads());
  std::copy_n(grads.begin() + p, extra.size(), extra.begin());
}

LossSum CpuDevice::evaluate_test(int64_t begin, int64_t end) {
  const int64_t o = model_.outputs();
  // Rows per forward: the workspace stays near 4 M floats (16 MB; an MLP's is smaller).
  const int64_t chunk = model_.rows_within(int64_t{1} << 22, 1024);
  std::vector<int64_t> idx;
  LossSum total{};
  for (int64_t lo = begin; lo < end; lo += chunk) {
    const int64_t hi = std::min(end, lo + chunk);
    idx.resize(hi - lo);
    for (int64_t i = lo; i < hi; ++i)
      idx[i - lo] = i;
    batch_->load(*data_, data_->test, idx);
    auto out = model_.forward(batch_->x.data(), hi - lo);
    const LossSum s = batch_->loss(*data_, out, hi - lo, o, mse_, 1.0f, false);
    total.loss += s.loss;
    total.correct += s.correct;
  }
  return total;
}

}  // namespace dsgd
