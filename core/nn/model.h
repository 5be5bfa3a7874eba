// ModelSpec (the --model flag) and Mlp: Linear layers with ReLU between them, laid out as
// PyTorch's nn.Linear (weight (out, in), bias (out), y = x W^T + b) so parameters compare
// one to one with a PyTorch run. Parameters and gradients each live in one flat buffer, so
// a training step needs a single all_reduce. CPU only; no autograd, no other layer kinds.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/io/npz.h"
#include "core/tensor.h"

namespace dsgd {

struct ModelSpec {
  enum class Kind { softmax, mlp, linear };
  Kind kind = Kind::softmax;
  std::vector<int64_t> hidden;  // mlp:128,64 -> {128, 64}; empty for softmax and linear

  static constexpr int64_t kMaxWidth = int64_t{1} << 20;

  // "softmax" | "linear" | "mlp:H[,H...]" with each H in 1..kMaxWidth; UsageError otherwise.
  static ModelSpec parse(const std::string& text);
  std::string str() const;  // parse(spec.str()) == spec
  bool operator==(const ModelSpec&) const = default;
};

struct ParamInfo {
  std::string name;  // layers.{i}.weight / layers.{i}.bias
  Shape shape;       // (out, in) / (out,)
  int64_t offset;    // into values() and grads()
  int64_t numel;
};

// Notation: n = rows in this call, D = sizes.front(), O = sizes.back(), L = Linear layers.
class Mlp {
 public:
  // Refuses models whose parameters would not fit in kMaxParams floats.
  static constexpr int64_t kMaxParams = int64_t{1} << 30;

  // sizes = {D, H1, ..., Hk, O}. extra_grad_slots reserves floats after the gradients in
  // the same buffer: the trainer all-reduces its loss and accuracy counters with them.
  explicit Mlp(std::vector<int64_t> sizes, int64_t extra_grad_slots = 0);
  // softmax and linear have no hidden layer: one Linear D -> O.
  static Mlp from_spec(const ModelSpec& spec, int64_t features, int64_t outputs,
                       int64_t extra_grad_slots = 0);

  const std::vector<int64_t>& sizes() const { return sizes_; }
  int64_t num_layers() const { return static_cast<int64_t>(sizes_.size()) - 1; }
  const std::vector<ParamInfo>& params() const { return params_; }
  int64_t num_params() const { return num_params_; }

  std::span<float> values() { return values_; }
  std::span<const float> values() const { return values_; }
  std::span<float> grads() { return std::span<float>(grad_buffer_).first(num_params_); }
  std::span<const float> grads() const {
    return std::span<const float>(grad_buffer_).first(num_params_);
  }
  std::span<float> grad_buffer() { return grad_buffer_; }  // num_params + extra_grad_slots
  void zero_grad();                                        // zeroes the whole grad buffer

  // PyTorch nn.Linear's default distribution, weight and bias ~ U(-1/sqrt(in), 1/sqrt(in)),
  // drawn from a self-contained xoshiro256** stream so every platform gets the same numbers.
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
  std::vector<int64_t> sizes_;
  std::vector<ParamInfo> params_;  // weight, bias per layer, as nn.Module.parameters()
  int64_t num_params_ = 0;
  std::vector<float> values_;       // num_params
  std::vector<float> grad_buffer_;  // num_params + extra slots

  // Workspace. acts_[l] is (n, sizes[l + 1]): layer l's output, after ReLU for hidden layers.
  std::vector<std::vector<float>> acts_;
  std::vector<float> delta_a_, delta_b_;  // (n, max hidden): ping-pong dLoss/d(hidden)
  int64_t forward_rows_ = -1;             // n of the last forward, checked by backward
};

}  // namespace dsgd
