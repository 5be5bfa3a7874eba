// nn.ReLU: y = max(x, 0).
#include <algorithm>

#include "core/nn/layer.h"

namespace dsgd {

namespace {

class Relu final : public Layer {
 public:
  explicit Relu(int64_t features) : features_(features) {}
  int64_t in_features() const override { return features_; }
  int64_t out_features() const override { return features_; }

  void forward(const float*, const float* in, float* out, int64_t n) override {
    for (int64_t i = 0; i < n * features_; ++i)
      out[i] = std::max(in[i], 0.0f);
  }
  // out > 0 exactly where the input was > 0.
  void backward_input(const float*, const float* out, const float* dout, float* din,
                      int64_t n) override {
    for (int64_t i = 0; i < n * features_; ++i)
      din[i] = out[i] > 0.0f ? dout[i] : 0.0f;
  }

 private:
  int64_t features_;
};

}  // namespace

std::unique_ptr<Layer> make_relu(int64_t features) {
  return std::make_unique<Relu>(features);
}

}  // namespace dsgd
