// Layer: one stage of a Model (core/nn/model.h). Every layer maps n samples, each a row of
// in_features() floats, to n rows of out_features() floats; images are rows in PyTorch's
// NCHW order (channel, then row, then column), so a Linear after a convolution reads them as
// nn.Flatten would. A layer with parameters has a weight and a bias, shaped as PyTorch's
// nn.Linear or nn.Conv2d, stored one after the other where the model says (params below).
// Layers keep what backward needs from forward (im2col columns, max positions) in their own
// workspace, grown on demand: a model belongs to one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/tensor.h"

namespace dsgd {

class Layer {
 public:
  virtual ~Layer() = default;
  virtual int64_t in_features() const = 0;
  virtual int64_t out_features() const = 0;
  // {weight shape, bias shape}, or empty for a layer without parameters.
  virtual std::vector<Shape> param_shapes() const { return {}; }
  // Inputs that feed one output (PyTorch's fan_in): initialisation draws U(-b, b), b =
  // 1/sqrt(fan_in), as nn.Linear and nn.Conv2d's defaults do.
  virtual int64_t fan_in() const { return 1; }
  // Multiply-adds per sample of forward (model time: backward costs about twice as many).
  virtual double macs() const { return 0; }
  // Floats of workspace per sample that forward keeps for backward (chunking evaluation).
  virtual int64_t workspace_per_sample() const { return 0; }

  // out (n, out) from in (n, in); params is the weight followed by the bias.
  virtual void forward(const float* params, const float* in, float* out, int64_t n) = 0;
  // After forward with the same in and n, given dout = dLoss/dout (n, out): ADDS
  // dLoss/dparams to grads (laid out as params). A layer without parameters does nothing.
  virtual void backward_params(const float* in, const float* dout, float* grads, int64_t n) {
    (void)in, (void)dout, (void)grads, (void)n;
  }
  // Writes din = dLoss/din (n, in); out is what forward wrote.
  virtual void backward_input(const float* params, const float* out, const float* dout, float* din,
                              int64_t n) = 0;
};

// nn.Linear(in, out): y = x W^T + b, W (out, in).
std::unique_ptr<Layer> make_linear(int64_t in, int64_t out);
// nn.ReLU over `features` values a sample.
std::unique_ptr<Layer> make_relu(int64_t features);

struct ImageShape {
  int64_t channels = 1, height = 1, width = 1;
  int64_t numel() const { return channels * height * width; }
};
// nn.Conv2d(in.channels, out_channels, kernel, stride=1, padding) with a bias, computed as
// im2col and one OpenBLAS sgemm a sample. Output shape: conv_output(in, ...).
std::unique_ptr<Layer> make_conv2d(ImageShape in, int64_t out_channels, int64_t kernel,
                                   int64_t padding);
ImageShape conv_output(ImageShape in, int64_t out_channels, int64_t kernel, int64_t padding);
// nn.MaxPool2d(kernel) (stride = kernel, no padding, rounding down). A window's first
// largest value (row by row) takes the gradient, as PyTorch's CPU kernel picks it.
std::unique_ptr<Layer> make_max_pool2d(ImageShape in, int64_t kernel);
ImageShape pool_output(ImageShape in, int64_t kernel);

}  // namespace dsgd
