// The moving average TensorBoard smooths a training curve with, debiased (its first values are
// not pulled towards 0): a step's loss is noisy, its trend is what a comparison reads. Used by
// `dsgd compare`'s plots and by dsgd-gui's overlay of their runs, so both show the same lines.
#pragma once

#include <vector>

namespace dsgd {

inline constexpr double kCurveSmoothing = 0.8;  // TensorBoard's slider, 0 (none) to 1

inline std::vector<double> smoothed(const std::vector<double>& v, double weight = kCurveSmoothing) {
  std::vector<double> out(v.size());
  double last = 0, debias = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    last = weight * last + (1 - weight) * v[i];
    debias = weight * debias + (1 - weight);
    out[i] = last / debias;
  }
  return out;
}

}  // namespace dsgd
