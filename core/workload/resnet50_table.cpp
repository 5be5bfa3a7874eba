// ResNet-50 v1.5 as torchvision builds it (the bottleneck's stride is on its 3x3 conv), for a
// 224x224 input: one layer per conv with its BatchNorm folded in, and one for the final fc.
// Notation: Cin, Cout = channels in and out, K = kernel side, H x W = the conv's output size;
// MACs = Cout*H*W*Cin*K*K (convs have no bias), flops = 2*MACs.
// Not counted: BatchNorm, ReLU, the residual adds and the pools. They touch about 11 million
// activations per sample at a few flops each, about 1% of the convs' 8.2 Gflops.
#include <string>

#include <fmt/format.h>

#include "core/workload/model_builders.h"

namespace dsgd {
namespace {

constexpr int64_t kInputSide = 224;  // pixels, square
constexpr int64_t kInputChannels = 3;
constexpr int64_t kClasses = 1000;
constexpr int64_t kExpansion = 4;  // a bottleneck's output has 4x its width in channels

struct Stage {
  int64_t blocks, width, stride;
};
// torchvision resnet50: layers=[3, 4, 6, 3], widths 64..512, stride 2 from layer2 on.
constexpr Stage kStages[] = {{3, 64, 1}, {4, 128, 2}, {6, 256, 2}, {3, 512, 2}};

// Output side of a conv with torchvision's padding K/2 (also of the 3x3/2 max pool).
int64_t out_side(int64_t in_side, int64_t kernel, int64_t stride) {
  return (in_side + 2 * (kernel / 2) - kernel) / stride + 1;
}

// A layer from its multiply-adds per sample and its trainable parameters. The backward pass
// does the forward's matmul twice more: once for the input's gradient, once for the weights'.
WorkloadLayer counted_layer(const std::string& name, int64_t macs, int64_t params) {
  WorkloadLayer layer;
  layer.name = name;
  layer.forward_flops = 2.0 * static_cast<double>(macs);
  layer.input_grad_flops = layer.forward_flops;
  layer.weight_grad_flops = layer.forward_flops;
  layer.grad_bytes = kBytesPerGrad * params;
  layer.update_flops = kSgdFlopsPerParam * static_cast<double>(params);
  return layer;
}

// A KxK conv from in_ch to out_ch channels reading an in_side square, and its BatchNorm
// (a weight and a bias per output channel; its running statistics are buffers, not trained).
WorkloadLayer conv_bn(const std::string& name, int64_t in_ch, int64_t out_ch, int64_t kernel,
                      int64_t stride, int64_t in_side) {
  const int64_t side = out_side(in_side, kernel, stride);
  const int64_t weights = out_ch * in_ch * kernel * kernel;
  return counted_layer(name, weights * side * side, weights + 2 * out_ch);
}

// torchvision's Bottleneck: 1x1 down to `width`, 3x3 at `stride`, 1x1 up to 4*width, and a
// 1x1 (strided) projection of the input when its shape differs. `side` is updated to the
// block's output side.
void add_bottleneck(std::vector<WorkloadLayer>& layers, const std::string& prefix, int64_t in_ch,
                    int64_t width, int64_t stride, int64_t& side) {
  const int64_t out_ch = width * kExpansion;
  const int64_t mid_side = out_side(side, 3, stride);
  layers.push_back(conv_bn(prefix + ".conv1", in_ch, width, 1, 1, side));
  layers.push_back(conv_bn(prefix + ".conv2", width, width, 3, stride, side));
  layers.push_back(conv_bn(prefix + ".conv3", width, out_ch, 1, 1, mid_side));
  if (stride != 1 || in_ch != out_ch)
    layers.push_back(conv_bn(prefix + ".downsample.0", in_ch, out_ch, 1, stride, side));
  side = mid_side;
}

}  // namespace

Workload resnet50_workload() {
  Workload w;
  w.name = "resnet50";
  w.source =
      "He et al. 2015 (ResNet-50 v1.5: stride on the 3x3 conv), torchvision resnet50 "
      "(25,557,032 parameters), 224x224 input; flops = 2 x conv/fc multiply-adds, "
      "BatchNorm/ReLU/pooling not counted";
  w.sample = "224x224 images";

  // Stem: 7x7/2 conv to 64 channels, then a 3x3/2 max pool. The first conv reads the images,
  // which need no gradient.
  int64_t side = kInputSide;
  w.layers.push_back(conv_bn("conv1", kInputChannels, 64, 7, 2, side));
  w.layers.back().input_grad_flops = 0;
  side = out_side(out_side(side, 7, 2), 3, 2);

  int64_t channels = 64;
  for (size_t s = 0; s < std::size(kStages); ++s) {
    const Stage& stage = kStages[s];
    for (int64_t b = 0; b < stage.blocks; ++b) {
      add_bottleneck(w.layers, fmt::format("layer{}.{}", s + 1, b), channels, stage.width,
                     b == 0 ? stage.stride : 1, side);
      channels = stage.width * kExpansion;
    }
  }

  // Global average pool to channels x 1 x 1, then fc with a bias.
  w.layers.push_back(counted_layer("fc", channels * kClasses, channels * kClasses + kClasses));
  return w;
}

}  // namespace dsgd
