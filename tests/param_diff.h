// Comparing two runs' parameters in the tests: the worst relative difference over the tensors.
#pragma once

#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/io/npz.h"

namespace dsgd {

// The same shape and the same bits (an empty tensor equals an empty one).
inline bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() &&
         (a.numel() == 0 ||
          std::memcmp(a.data(), b.data(), sizeof(float) * static_cast<size_t>(a.numel())) == 0);
}

// The same tensors: names, shapes and bits, in the same order.
inline bool same_bits(const std::vector<NamedTensor>& a, const std::vector<NamedTensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t t = 0; t < a.size(); ++t)
    if (a[t].name != b[t].name || !same_bits(a[t].tensor, b[t].tensor)) return false;
  return true;
}

// max |a - b| / max |b| per tensor, the worst over all tensors. The two lists must name the
// same tensors, of the same shapes, in the same order.
inline double max_rel_diff(const std::vector<NamedTensor>& a, const std::vector<NamedTensor>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (size_t t = 0; t < a.size(); ++t) {
    REQUIRE(a[t].name == b[t].name);
    REQUIRE(a[t].tensor.shape() == b[t].tensor.shape());
    double diff = 0, scale = 0;
    for (int64_t i = 0; i < a[t].tensor.numel(); ++i) {
      diff = std::max(diff, double(std::abs(a[t].tensor[i] - b[t].tensor[i])));
      scale = std::max(scale, double(std::abs(b[t].tensor[i])));
    }
    worst = std::max(worst, diff / scale);
  }
  return worst;
}

}  // namespace dsgd
