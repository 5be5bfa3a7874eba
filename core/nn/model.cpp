// Notation: n = rows in this call; stage i maps (n, in_features) to (n, out_features).
#include "core/nn/model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "core/data/rng.h"
#include "core/errors.h"

namespace dsgd {

// --- construction -------------------------------------------------------------------------

namespace {

std::string join_sizes(const std::vector<int64_t>& sizes) {
  return fmt::format("{}", fmt::join(sizes, ", "));
}

// The smallest image LeNet can take: after conv (pad 2), pool, conv (no pad) and pool, at
// least one pixel must remain.
constexpr int64_t kLenetMinSide = 12;

}  // namespace

std::vector<Model::Stage> Model::mlp_stages(const std::vector<int64_t>& sizes) {
  if (sizes.size() < 2)
    throw UsageError(
        fmt::format("Model: needs at least input and output sizes, got {} size(s)", sizes.size()));
  for (int64_t s : sizes)
    if (s < 1 || s > kMaxParams)
      throw UsageError(fmt::format("Model: layer sizes ({}) must each be in 1..{}",
                                   join_sizes(sizes), kMaxParams));
  std::vector<Stage> stages;
  for (size_t l = 0; l + 1 < sizes.size(); ++l) {
    if (l > 0) stages.push_back({make_relu(sizes[l])});
    stages.push_back({make_linear(sizes[l], sizes[l + 1])});
  }
  return stages;
}

Model::Model(std::vector<int64_t> sizes, int64_t extra_grad_slots)
    : Model(mlp_stages(sizes), extra_grad_slots) {
  mlp_sizes_ = std::move(sizes);
}

Model::Model(std::vector<Stage> stages, int64_t extra_grad_slots) : stages_(std::move(stages)) {
  if (extra_grad_slots < 0)
    throw UsageError(fmt::format("Model: extra_grad_slots must be >= 0, got {}", extra_grad_slots));
  int64_t offset = 0;
  for (Stage& stage : stages_) {
    const std::vector<Shape> shapes = stage.layer->param_shapes();
    if (shapes.empty()) continue;
    const std::string name = fmt::format("layers.{}", params_.size() / 2);
    stage.offset = offset;
    for (int p = 0; p < 2; ++p) {
      const int64_t numel = shape_numel(shapes[p]);
      params_.push_back({name + (p == 0 ? ".weight" : ".bias"), shapes[p], offset, numel});
      offset += numel;
    }
    if (offset > kMaxParams)
      throw UsageError(
          fmt::format("the model has more than {} parameters; use narrower layers", kMaxParams));
  }
  num_params_ = offset;
  values_.assign(static_cast<size_t>(num_params_), 0.0f);
  grad_buffer_.assign(static_cast<size_t>(num_params_ + extra_grad_slots), 0.0f);
  acts_.resize(stages_.size());
}

Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;
Model::~Model() = default;

namespace {

// LeNet-5 as PyTorch tutorials write it for 28x28 images, with two Linear layers:
// conv (6, 5x5, pad 2), ReLU, pool 2, conv (16, 5x5), ReLU, pool 2, Linear (120), ReLU, Linear.
int64_t lenet_side(int64_t features) {
  const auto side = static_cast<int64_t>(std::llround(std::sqrt(double(features))));
  if (side * side != features || side < kLenetMinSide)
    throw UsageError(fmt::format(
        "--model cnn:lenet reads each sample as a square grey image of at least {0}x{0} "
        "pixels (Fashion-MNIST's are 28x28, 784 features); these data have {1} features: use "
        "image data such as fashion-mnist, or --model mlp:H",
        kLenetMinSide, features));
  return side;
}

}  // namespace

void Model::check_inputs(const ModelSpec& spec, int64_t features) {
  if (spec.kind == ModelSpec::Kind::cnn) lenet_side(features);
}

Model Model::from_spec(const ModelSpec& spec, int64_t features, int64_t outputs,
                       int64_t extra_grad_slots) {
  if (spec.kind != ModelSpec::Kind::cnn) {
    std::vector<int64_t> sizes{features};
    sizes.insert(sizes.end(), spec.hidden.begin(), spec.hidden.end());
    sizes.push_back(outputs);
    return Model(std::move(sizes), extra_grad_slots);
  }
  const int64_t side = lenet_side(features);
  std::vector<Stage> stages;
  const ImageShape image{1, side, side};
  const ImageShape c1 = conv_output(image, 6, 5, 2), p1 = pool_output(c1, 2);
  const ImageShape c2 = conv_output(p1, 16, 5, 0), p2 = pool_output(c2, 2);
  stages.push_back({make_conv2d(image, 6, 5, 2)});
  stages.push_back({make_relu(c1.numel())});
  stages.push_back({make_max_pool2d(c1, 2)});
  stages.push_back({make_conv2d(p1, 16, 5, 0)});
  stages.push_back({make_relu(c2.numel())});
  stages.push_back({make_max_pool2d(c2, 2)});
  stages.push_back({make_linear(p2.numel(), 120)});
  stages.push_back({make_relu(120)});
  stages.push_back({make_linear(120, outputs)});
  return Model(std::move(stages), extra_grad_slots);
}

int64_t Model::inputs() const {
  return stages_.front().layer->in_features();
}

int64_t Model::outputs() const {
  return stages_.back().layer->out_features();
}

std::vector<double> Model::macs_per_layer() const {
  std::vector<double> macs;
  for (const Stage& stage : stages_)
    if (stage.offset >= 0) macs.push_back(stage.layer->macs());
  return macs;
}

double Model::macs_per_sample() const {
  double macs = 0;
  for (const Stage& stage : stages_)
    macs += stage.layer->macs();
  return macs;
}

int64_t Model::rows_within(int64_t floats, int64_t cap) const {
  int64_t per_row = 0;
  for (const Stage& stage : stages_)
    per_row += stage.layer->out_features() + stage.layer->workspace_per_sample();
  return std::clamp<int64_t>(floats / std::max<int64_t>(per_row, 1), 1, cap);
}

void Model::zero_grad() {
  std::fill(grad_buffer_.begin(), grad_buffer_.end(), 0.0f);
}

void Model::init(uint64_t seed) {
  data::Rng rng(data::Rng::plain_seed, seed);
  for (const Stage& stage : stages_) {
    if (stage.offset < 0) continue;
    const auto bound = static_cast<float>(1.0 / std::sqrt(double(stage.layer->fan_in())));
    const int64_t numel =
        shape_numel(stage.layer->param_shapes()[0]) + shape_numel(stage.layer->param_shapes()[1]);
    float* v = values_.data() + stage.offset;
    for (int64_t i = 0; i < numel; ++i)  // uniform in [-1, 1) on a grid of 2^-23: exact
      v[i] = bound * (static_cast<float>(rng.next_u64() >> 40) * 0x1.0p-23f - 1.0f);
  }
}

// --- forward and backward -----------------------------------------------------------------

namespace {

void grow(std::vector<float>& buf, int64_t count) {
  if (static_cast<int64_t>(buf.size()) < count) buf.resize(static_cast<size_t>(count));
}

}  // namespace

std::span<const float> Model::forward(const float* x, int64_t n) {
  if (n < 0) throw std::invalid_argument(fmt::format("Model::forward: n = {} < 0", n));
  const float* in = x;
  for (size_t i = 0; i < stages_.size(); ++i) {
    Layer& layer = *stages_[i].layer;
    grow(acts_[i], n * layer.out_features());
    const float* params = stages_[i].offset < 0 ? nullptr : values_.data() + stages_[i].offset;
    layer.forward(params, in, acts_[i].data(), n);
    in = acts_[i].data();
  }
  forward_rows_ = n;
  return {acts_.back().data(), static_cast<size_t>(n * outputs())};
}

void Model::backward(const float* x, const float* dout, int64_t n, const LayerDone& layer_done) {
  if (n != forward_rows_)
    throw std::logic_error(fmt::format(
        "Model::backward: called with n = {} after forward with n = {}", n, forward_rows_));
  int64_t widest = 0;
  for (const Stage& stage : stages_)
    widest = std::max(widest, stage.layer->in_features());
  grow(delta_a_, n * widest);
  grow(delta_b_, n * widest);

  int64_t layer_index = num_layers();
  const float* g = dout;  // dLoss/d(stage i's output)
  for (size_t i = stages_.size(); i-- > 0;) {
    Layer& layer = *stages_[i].layer;
    const float* in = i == 0 ? x : acts_[i - 1].data();
    const float* params = nullptr;
    if (stages_[i].offset >= 0) {
      params = values_.data() + stages_[i].offset;
      layer.backward_params(in, g, grad_buffer_.data() + stages_[i].offset, n);
      --layer_index;
      if (layer_done) layer_done(layer_index);
    }
    if (i == 0) break;  // nobody needs dLoss/dx
    float* din = (i % 2 == 0) ? delta_a_.data() : delta_b_.data();
    layer.backward_input(params, acts_[i].data(), g, din, n);
    g = din;
  }
}

}  // namespace dsgd
