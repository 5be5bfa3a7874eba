// CpuDevice: a rank's ComputeDevice when it computes on the CPU. Its working copy is the
// trainer's own Model and Sgd (set_params and get_params copy only when handed another
// buffer), so the CPU and the GPU run the same training loop. Cross-entropy (softmax,
// mlp) and MSE (linear) as core/nn/loss.h defines them.
// Not a thread pool: BLAS threads are the caller's choice (set_blas_threads).
#pragma once

#include <memory>
#include <vector>

#include "core/nn/model.h"
#include "core/nn/sgd.h"
#include "core/train/device.h"

namespace dsgd {

// Notation: n = this rank's rows in a step, D = features, O = outputs, P = parameters.
class CpuDevice : public ComputeDevice {
 public:
  // model has two extra gradient slots (loss sum, correct count); both outlive the device.
  CpuDevice(Model& model, Sgd& sgd, bool mse_loss);
  ~CpuDevice() override;

  std::string name() const override { return "cpu"; }
  void load_data(const Dataset& data) override;
  void set_params(std::span<const float> values) override;
  void get_params(std::span<float> values) override;
  void set_momentum(std::span<const float> values) override;
  bool get_momentum(std::span<float> values) override;
  std::span<float> gradients(std::span<const int64_t> rows, float grad_scale) override;
  std::span<float> gradients_by_layer(std::span<const int64_t> rows, float grad_scale,
                                      const LayersDone& layers_done) override;
  void update(std::span<float> extra) override;
  LossSum evaluate_test(int64_t begin, int64_t end) override;

 private:
  struct Batch;
  Model& model_;
  Sgd& sgd_;
  bool mse_;
  const Dataset* data_ = nullptr;
  std::unique_ptr<Batch> batch_;  // grown once, reused every step
};

}  // namespace dsgd
