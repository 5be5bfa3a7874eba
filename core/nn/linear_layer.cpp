// nn.Linear: y = x W^T + b (n = rows, W is (out, in)).
#include <fmt/format.h>

#include "core/nn/blas.h"
#include "core/nn/layer.h"

namespace dsgd {

namespace {

class Linear final : public Layer {
 public:
  Linear(int64_t in, int64_t out) : in_(in), out_(out) {}
  int64_t in_features() const override { return in_; }
  int64_t out_features() const override { return out_; }
  std::vector<Shape> param_shapes() const override { return {{out_, in_}, {out_}}; }
  int64_t fan_in() const override { return in_; }
  double macs() const override { return double(in_) * double(out_); }

  void forward(const float* params, const float* in, float* out, int64_t n) override {
    const float* w = params;
    const float* b = params + out_ * in_;
    gemm(false, true, n, out_, in_, 1.0f, in, in_, w, in_, 0.0f, out, out_);
    for (int64_t i = 0; i < n; ++i) {
      float* row = out + i * out_;
      for (int64_t j = 0; j < out_; ++j)
        row[j] += b[j];
    }
  }

  void backward_params(const float* in, const float* dout, float* grads, int64_t n) override {
    float* dw = grads;
    float* db = grads + out_ * in_;
    for (int64_t i = 0; i < n; ++i) {  // db += column sums of dout, row by row
      const float* row = dout + i * out_;
      for (int64_t j = 0; j < out_; ++j)
        db[j] += row[j];
    }
    gemm(true, false, out_, in_, n, 1.0f, dout, out_, in, in_, 1.0f, dw, in_);  // dW += dout^T x
  }

  void backward_input(const float* params, const float*, const float* dout, float* din,
                      int64_t n) override {
    gemm(false, false, n, in_, out_, 1.0f, dout, out_, params, in_, 0.0f, din, in_);  // dout W
  }

 private:
  int64_t in_, out_;
};

}  // namespace

std::unique_ptr<Layer> make_linear(int64_t in, int64_t out) {
  return std::make_unique<Linear>(in, out);
}

}  // namespace dsgd
