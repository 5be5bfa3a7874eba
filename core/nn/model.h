// Model: a sequence of layers (core/nn/layer.h) built from a ModelSpec: softmax and linear
// are one nn.Linear, mlp:H,... Linear layers with ReLU between them, cnn:lenet a LeNet-5
// style network for square grey images (conv 5x5 pad 2, ReLU, max pool 2, conv 5x5, ReLU,
// max pool 2, Linear 120, ReLU, Linear). Parameters are named and shaped as PyTorch's, so
// they compare one to one with a PyTorch run (--init, --save), and the parameters and the
// gradients each live in one flat buffer, so a training step needs a single all_reduce.
// CPU only; no autograd.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/io/npz.h"
#include "core/nn/layer.h"
#include "core/nn/model_spec.h"
#include "core/tensor.h"

namespace dsgd {

struct ParamInfo {
  std::string name;  // layers.{i}.weight / layers.{i}.bias, i counting the layers with them
  Shape shape;       // as PyTorch's: (out, in) / (out, in_channels, k, k) / (out,)
  int64_t offset;    // into values() and grads()
  int64_t numel;
};

// Notation: n = rows in this call, D = inputs(), O = outputs(). "Layer l" in the interface
// counts the layers with parameters (weight and bias are params 2l and 2l + 1).
class Model {
 public:
  // Refuses models whose parameters would not fit in kMaxParams floats.
  static constexpr int64_t kMaxParams = int64_t{1} << 30;

  // An MLP: sizes = {D, H1, ..., Hk, O}. extra_grad_slots reserves floats after the
  // gradients in the same buffer: the trainer all-reduces its loss and accuracy counters
  // with them.
  explicit Model(std::vector<int64_t> sizes, int64_t extra_grad_slots = 0);
  // UsageError when the spec cannot take `features` inputs (cnn:lenet needs square images):
  // check_inputs says so without building the model.
  static void check_inputs(const ModelSpec& spec, int64_t features);
  static Model from_spec(const ModelSpec& spec, int64_t features, int64_t outputs,
                         int64_t extra_grad_slots = 0);
  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;
  ~Model();

  int64_t inputs() const;
  int64_t outputs() const;
  // {D, H..., O} of an MLP (what a CUDA device builds); empty for a convolutional network.
  const std::vector<int64_t>& mlp_sizes() const { return mlp_sizes_; }
  int64_t num_layers() const { return static_cast<int64_t>(params_.size()) / 2; }
  const std::vector<ParamInfo>& params() const { return params_; }
  int64_t num_params() const { return num_params_; }
  // Multiply-adds per sample of layer l's forward, and of the whole forward.
  std::vector<double> macs_per_layer() const;
  double macs_per_sample() const;
  // Rows per forward that keep the workspace near `floats` (at least 1, at most `cap`).
  int64_t rows_within(int64_t floats, int64_t cap) const;

  std::span<float> values() { return values_; }
  std::span<const float> values() const { return values_; }
  std::span<float> grads() { return std::span<float>(grad_buffer_).first(num_params_); }
  std::span<const float> grads() const {
    return std::span<const float>(grad_buffer_).first(num_params_);
  }
  std::span<float> grad_buffer() { return grad_buffer_; }  // num_params + extra_grad_slots
  void zero_grad();                                        // zeroes the whole grad buffer

  // PyTorch's default distribution for nn.Linear and nn.Conv2d, weight and bias ~ U(-1/
  // sqrt(fan_in), 1/sqrt(fan_in)), drawn in params() order from a self-contained xoshiro256**
  // stream so every platform gets the same numbers.
  void init(uint64_t seed);

  // x is (n, D). Returns the output (n, O), which lives in a workspace owned by the model:
  // valid until the next forward(); grown on demand, so a warmed-up step allocates nothing.
  std::span<const float> forward(const float* x, int64_t n);
  // After forward(x, n) with the same x and n: dout is (n, O) = dLoss/dOutput.
  // ACCUMULATES the parameter gradients into grads() (+=). Calls layer_done(l), when given,
  // as soon as layer l's weight and bias gradients are final, from the last layer down (as
  // autograd's hooks tell DistributedDataParallel).
  using LayerDone = std::function<void(int64_t layer)>;
  void backward(const float* x, const float* dout, int64_t n, const LayerDone& layer_done = {});

  // Parameters as named (copied) tensors, in params() order.
  std::vector<NamedTensor> state() const;
  // Loads every parameter; DataError naming `source` (e.g. "--init params.npz") when a name
  // is missing or unknown, or a shape differs from the model's.
  void load_state(const std::vector<NamedTensor>& tensors, const std::string& source);

 private:
  struct Stage {
    std::unique_ptr<Layer> layer;
    int64_t offset = -1;  // of its weight in values(), or -1 without parameters
  };
  Model(std::vector<Stage> stages, int64_t extra_grad_slots);
  static std::vector<Stage> mlp_stages(const std::vector<int64_t>& sizes);

  std::vector<Stage> stages_;
  std::vector<int64_t> mlp_sizes_;
  std::vector<ParamInfo> params_;  // weight, bias per layer, as nn.Module.parameters()
  int64_t num_params_ = 0;
  std::vector<float> values_;       // num_params
  std::vector<float> grad_buffer_;  // num_params + extra slots

  // Workspace: acts_[i] is (n, stage i's out_features); delta_a_ and delta_b_ ping-pong
  // dLoss/d(a stage's output) in backward.
  std::vector<std::vector<float>> acts_;
  std::vector<float> delta_a_, delta_b_;
  int64_t forward_rows_ = -1;  // n of the last forward, checked by backward
};

}  // namespace dsgd
