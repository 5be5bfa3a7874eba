// ModelSpec: the --model flag. softmax and linear are one Linear layer, mlp:H[,H...] Linear
// layers with ReLU between them, cnn:lenet a LeNet-5 style convolutional network for square
// grey images (core/nn/model.h builds each).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dsgd {

struct ModelSpec {
  enum class Kind { softmax, mlp, linear, cnn };
  Kind kind = Kind::softmax;
  std::vector<int64_t> hidden;  // mlp:128,64 -> {128, 64}; empty for the others
  std::string architecture;     // cnn:lenet -> "lenet"; empty for the others

  static constexpr int64_t kMaxWidth = int64_t{1} << 20;

  // "softmax" | "linear" | "mlp:H[,H...]" with each H in 1..kMaxWidth | "cnn:lenet";
  // UsageError otherwise.
  static ModelSpec parse(const std::string& text);
  std::string str() const;  // parse(spec.str()) == spec
  bool operator==(const ModelSpec&) const = default;
};

}  // namespace dsgd
