// nn.MaxPool2d(K): stride K, no padding, output sides rounded down. Forward remembers which
// input pixel each output took (the first largest in the window, row by row, or its last NaN,
// as PyTorch's CPU kernel does), and backward sends the gradient there.
#include <cmath>
#include <vector>

#include "core/nn/layer.h"

namespace dsgd {

ImageShape pool_output(ImageShape in, int64_t kernel) {
  return {in.channels, in.height / kernel, in.width / kernel};
}

namespace {

class MaxPool2d final : public Layer {
 public:
  MaxPool2d(ImageShape in, int64_t kernel) : in_(in), out_(pool_output(in, kernel)), k_(kernel) {}
  int64_t in_features() const override { return in_.numel(); }
  int64_t out_features() const override { return out_.numel(); }
  int64_t workspace_per_sample() const override { return out_.numel(); }

  void forward(const float*, const float* in, float* out, int64_t n) override {
    if (static_cast<int64_t>(argmax_.size()) < n * out_.numel())
      argmax_.resize(static_cast<size_t>(n * out_.numel()));
    for (int64_t s = 0; s < n; ++s)
      for (int64_t c = 0; c < out_.channels; ++c)
        for (int64_t oy = 0; oy < out_.height; ++oy)
          for (int64_t ox = 0; ox < out_.width; ++ox) {
            const int64_t o = ((s * out_.channels + c) * out_.height + oy) * out_.width + ox;
            const int64_t best = window_max(in + s * in_.numel(), c, oy, ox);
            argmax_[o] = static_cast<int32_t>(best);
            out[o] = in[s * in_.numel() + best];
          }
  }

  void backward_input(const float*, const float*, const float* dout, float* din,
                      int64_t n) override {
    std::fill(din, din + n * in_.numel(), 0.0f);
    for (int64_t s = 0; s < n; ++s)
      for (int64_t i = 0; i < out_.numel(); ++i) {
        const int64_t o = s * out_.numel() + i;
        din[s * in_.numel() + argmax_[o]] += dout[o];
      }
  }

 private:
  // The index, within the sample, of the window's first largest pixel (its last NaN).
  int64_t window_max(const float* image, int64_t c, int64_t oy, int64_t ox) const {
    int64_t best = -1;
    float best_value = 0;
    for (int64_t ky = 0; ky < k_; ++ky)
      for (int64_t kx = 0; kx < k_; ++kx) {
        const int64_t i = (c * in_.height + oy * k_ + ky) * in_.width + ox * k_ + kx;
        if (best < 0 || image[i] > best_value || std::isnan(image[i])) {
          best = i;
          best_value = image[i];
        }
      }
    return best;
  }

  ImageShape in_, out_;
  int64_t k_;
  std::vector<int32_t> argmax_;  // (n, out): the input pixel each output took
};

}  // namespace

std::unique_ptr<Layer> make_max_pool2d(ImageShape in, int64_t kernel) {
  return std::make_unique<MaxPool2d>(in, kernel);
}

}  // namespace dsgd
