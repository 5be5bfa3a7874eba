// nn.Conv2d (stride 1, zero padding) as im2col and sgemm, one sample at a time.
// Notation: C in channels, O out channels, K kernel side, P = OH * OW output positions,
// CKK = C * K * K. A sample's columns are (CKK, P): row (c, ky, kx), column (oy, ox), the
// input pixel under that kernel tap at that position (0 in the padding). The weight
// (O, C, K, K) is the matrix (O, CKK), so out (O, P) = W cols.
#include <algorithm>
#include <vector>

#include "core/nn/blas.h"
#include "core/nn/layer.h"

namespace dsgd {

ImageShape conv_output(ImageShape in, int64_t out_channels, int64_t kernel, int64_t padding) {
  return {out_channels, in.height + 2 * padding - kernel + 1, in.width + 2 * padding - kernel + 1};
}

namespace {

class Conv2d final : public Layer {
 public:
  Conv2d(ImageShape in, int64_t out_channels, int64_t kernel, int64_t padding)
      : in_(in), out_(conv_output(in, out_channels, kernel, padding)), k_(kernel), pad_(padding) {}

  int64_t in_features() const override { return in_.numel(); }
  int64_t out_features() const override { return out_.numel(); }
  std::vector<Shape> param_shapes() const override {
    return {{out_.channels, in_.channels, k_, k_}, {out_.channels}};
  }
  int64_t fan_in() const override { return ckk(); }
  double macs() const override { return double(out_.numel()) * double(ckk()); }
  int64_t workspace_per_sample() const override { return ckk() * positions(); }

  void forward(const float* params, const float* in, float* out, int64_t n) override {
    const int64_t o = out_.channels, p = positions();
    if (static_cast<int64_t>(cols_.size()) < n * ckk() * p)
      cols_.resize(static_cast<size_t>(n * ckk() * p));
    const float* bias = params + o * ckk();
    for (int64_t s = 0; s < n; ++s) {
      float* cols = cols_.data() + s * ckk() * p;
      im2col(in + s * in_.numel(), cols);
      float* y = out + s * out_.numel();
      gemm(false, false, o, p, ckk(), 1.0f, params, ckk(), cols, p, 0.0f, y, p);
      for (int64_t c = 0; c < o; ++c)
        for (int64_t i = 0; i < p; ++i)
          y[c * p + i] += bias[c];
    }
  }

  // dW += dout cols^T and db += dout's row sums, sample by sample.
  void backward_params(const float*, const float* dout, float* grads, int64_t n) override {
    const int64_t o = out_.channels, p = positions();
    float* db = grads + o * ckk();
    for (int64_t s = 0; s < n; ++s) {
      const float* dy = dout + s * out_.numel();
      const float* cols = cols_.data() + s * ckk() * p;
      gemm(false, true, o, ckk(), p, 1.0f, dy, p, cols, p, 1.0f, grads, ckk());
      for (int64_t c = 0; c < o; ++c)
        for (int64_t i = 0; i < p; ++i)
          db[c] += dy[c * p + i];
    }
  }

  // dcols = W^T dout, then each column entry back onto the pixel it was read from.
  void backward_input(const float* params, const float*, const float* dout, float* din,
                      int64_t n) override {
    const int64_t o = out_.channels, p = positions();
    dcols_.resize(static_cast<size_t>(ckk() * p));
    for (int64_t s = 0; s < n; ++s) {
      gemm(true, false, ckk(), p, o, 1.0f, params, ckk(), dout + s * out_.numel(), p, 0.0f,
           dcols_.data(), p);
      col2im(dcols_.data(), din + s * in_.numel());
    }
  }

 private:
  int64_t ckk() const { return in_.channels * k_ * k_; }
  int64_t positions() const { return out_.height * out_.width; }

  // Calls f(row, column, pixel index or -1 in the padding) for every entry of the columns.
  template <typename F>
  void each_tap(F&& f) const {
    for (int64_t c = 0; c < in_.channels; ++c)
      for (int64_t ky = 0; ky < k_; ++ky)
        for (int64_t kx = 0; kx < k_; ++kx) {
          const int64_t row = (c * k_ + ky) * k_ + kx;
          for (int64_t oy = 0; oy < out_.height; ++oy) {
            const int64_t y = oy + ky - pad_;
            for (int64_t ox = 0; ox < out_.width; ++ox) {
              const int64_t x = ox + kx - pad_;
              const bool inside = y >= 0 && y < in_.height && x >= 0 && x < in_.width;
              f(row, oy * out_.width + ox, inside ? (c * in_.height + y) * in_.width + x : -1);
            }
          }
        }
  }

  void im2col(const float* image, float* cols) const {
    const int64_t p = positions();
    each_tap([&](int64_t row, int64_t col, int64_t pixel) {
      cols[row * p + col] = pixel < 0 ? 0.0f : image[pixel];
    });
  }

  void col2im(const float* cols, float* image) const {
    const int64_t p = positions();
    std::fill(image, image + in_.numel(), 0.0f);
    each_tap([&](int64_t row, int64_t col, int64_t pixel) {
      if (pixel >= 0) image[pixel] += cols[row * p + col];
    });
  }

  ImageShape in_, out_;
  int64_t k_, pad_;
  std::vector<float> cols_;   // (n, CKK, P), kept from forward for backward_params
  std::vector<float> dcols_;  // (CKK, P), one sample's
};

}  // namespace

std::unique_ptr<Layer> make_conv2d(ImageShape in, int64_t out_channels, int64_t kernel,
                                   int64_t padding) {
  return std::make_unique<Conv2d>(in, out_channels, kernel, padding);
}

}  // namespace dsgd
