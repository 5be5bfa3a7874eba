// Sgd: torch.optim.SGD's update on one flat parameter buffer (weight decay added to the
// gradient, momentum buffer set to the first gradient, dampening, Nesterov), so a dsgd
// run and a PyTorch run take the same steps. Every rank runs its own copy on the averaged
// gradients. Not a scheduler: the learning rate is fixed per instance.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace dsgd {

struct SgdOptions {
  float lr = 0.1f;
  float momentum = 0;
  float dampening = 0;
  float weight_decay = 0;
  bool nesterov = false;
};

// Notation: P = num_params. Per element, with g the gradient and p the parameter:
//   g += weight_decay * p
//   buf = g on the first step, else momentum * buf + (1 - dampening) * g   (momentum > 0)
//   g = nesterov ? g + momentum * buf : buf                                 (momentum > 0)
//   p -= lr * g
class Sgd {
 public:
  // UsageError unless lr > 0 and finite, momentum in [0, 1), dampening in [0, 1],
  // weight_decay >= 0 and finite, and nesterov only with momentum > 0 and dampening 0.
  Sgd(SgdOptions options, int64_t num_params);

  // params (P) and grads (P); grads are left unchanged.
  void step(std::span<float> params, std::span<const float> grads);

  const SgdOptions& options() const { return options_; }
  int64_t num_params() const { return num_params_; }
  int64_t steps() const { return steps_; }

  // The momentum buffer (P floats; empty when momentum is 0), for checkpoints. It holds
  // meaningful values only once has_momentum_buffer() (after the first step or a restore).
  std::span<float> momentum_buffer() { return buffer_; }
  std::span<const float> momentum_buffer() const { return buffer_; }
  bool has_momentum_buffer() const { return has_buffer_; }
  // Restores a saved buffer; DataError naming `source` when its size is not P, or when
  // this optimizer has no momentum.
  void set_momentum_buffer(std::span<const float> values, const std::string& source);
  // Forgets the buffer: the next step starts momentum afresh, as a new torch optimizer.
  void clear_momentum_buffer() { has_buffer_ = false; }

 private:
  SgdOptions options_;
  int64_t num_params_;
  int64_t steps_ = 0;
  std::vector<float> buffer_;  // (P) when momentum > 0
  bool has_buffer_ = false;
};

}  // namespace dsgd
