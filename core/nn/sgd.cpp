// Notation: P = parameters. The loops are split by option so each one vectorises.
#include "core/nn/sgd.h"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "core/errors.h"

namespace dsgd {

namespace {

void validate(const SgdOptions& o, int64_t num_params) {
  if (!(o.lr > 0.0f) || !std::isfinite(o.lr))
    throw UsageError(fmt::format("--lr {}: the learning rate must be a finite number > 0", o.lr));
  if (!(o.momentum >= 0.0f && o.momentum < 1.0f))
    throw UsageError(fmt::format("--momentum {}: momentum must be in [0, 1)", o.momentum));
  if (!(o.dampening >= 0.0f && o.dampening <= 1.0f))
    throw UsageError(fmt::format("--dampening {}: dampening must be in [0, 1]", o.dampening));
  if (!(o.weight_decay >= 0.0f) || !std::isfinite(o.weight_decay))
    throw UsageError(fmt::format("--weight-decay {}: weight decay must be a finite number >= 0",
                                 o.weight_decay));
  if (o.nesterov && (o.momentum == 0.0f || o.dampening != 0.0f))
    throw UsageError(fmt::format(
        "--nesterov needs --momentum > 0 and --dampening 0 (got momentum {}, dampening {})",
        o.momentum, o.dampening));
  if (num_params < 0)
    throw std::invalid_argument(fmt::format("Sgd: num_params = {} < 0", num_params));
}

}  // namespace

Sgd::Sgd(SgdOptions options, int64_t num_params) : options_(options), num_params_(num_params) {
  validate(options_, num_params_);
  if (options_.momentum > 0.0f) buffer_.assign(static_cast<size_t>(num_params_), 0.0f);
}

void Sgd::set_momentum_buffer(std::span<const float> values, const std::string& source) {
  if (options_.momentum == 0.0f)
    throw DataError(fmt::format(
        "{}: has a momentum buffer but this run's momentum is 0; pass the same --momentum as "
        "the run that saved it",
        source));
  if (static_cast<int64_t>(values.size()) != num_params_)
    throw DataError(fmt::format(
        "{}: momentum buffer has {} values, the model has {} parameters; resume with the same "
        "--model and --data",
        source, values.size(), num_params_));
  std::copy(values.begin(), values.end(), buffer_.begin());
  has_buffer_ = true;
}

void Sgd::step(std::span<float> params, std::span<const float> grads) {
  if (static_cast<int64_t>(params.size()) != num_params_ ||
      static_cast<int64_t>(grads.size()) != num_params_)
    throw std::invalid_argument(fmt::format("Sgd::step: {} params and {} grads, expected {}",
                                            params.size(), grads.size(), num_params_));
  const int64_t count = num_params_;
  float* p = params.data();       // (P)
  const float* g = grads.data();  // (P)
  const float lr = options_.lr;
  const float wd = options_.weight_decay;
  const float mu = options_.momentum;

  if (mu == 0.0f) {
    for (int64_t i = 0; i < count; ++i)
      p[i] -= lr * (g[i] + wd * p[i]);
  } else {
    float* buf = buffer_.data();  // (P)
    const float keep = 1.0f - options_.dampening;
    const bool first = !has_buffer_;
    const bool nesterov = options_.nesterov;
    // `first` and `nesterov` are loop-invariant; the compiler unswitches these branches.
    for (int64_t i = 0; i < count; ++i) {
      const float d = g[i] + wd * p[i];
      const float b = first ? d : mu * buf[i] + keep * d;
      buf[i] = b;
      p[i] -= lr * (nesterov ? d + mu * b : b);
    }
    has_buffer_ = true;
  }
  ++steps_;
}

}  // namespace dsgd
