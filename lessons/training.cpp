// B = global batch, n = rows, D = features, C = classes, P = parameters.
#include "lessons/training.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "core/comm/collectives.h"
#include "core/data/sampler.h"
#include "core/nn/loss.h"

namespace dsgd::lessons {
namespace {

Split first_rows(const Split& split, int64_t n, int64_t features) {
  n = std::min(n, split.size());
  Split out;
  out.x = Tensor({n, features}, std::vector<float>(split.x.data(), split.x.data() + n * features));
  if (!split.labels.empty()) out.labels.assign(split.labels.begin(), split.labels.begin() + n);
  if (!split.targets.empty()) out.targets.assign(split.targets.begin(), split.targets.begin() + n);
  return out;
}

}  // namespace

Dataset subset(const Dataset& data, int64_t train, int64_t test) {
  Dataset out;
  out.name = data.name;
  out.task = data.task;
  out.features = data.features;
  out.classes = data.classes;
  out.train = first_rows(data.train, train, data.features);
  out.test = first_rows(data.test, test, data.features);
  return out;
}

const Dataset& lesson_synthetic(LessonContext& ctx) {
  return ctx.dataset(fmt::format("synthetic:train=4096,test=1024,noise=0.5,seed={}", ctx.seed()));
}

double forward_backward(Model& model, const Dataset& data, std::span<const int64_t> idx,
                        float grad_scale) {
  const auto n = static_cast<int64_t>(idx.size());
  if (n == 0) return 0;
  const int64_t c = model.outputs();
  std::vector<float> x(n * data.features);
  std::vector<int32_t> labels(n);
  gather_rows(data.train, idx, x, labels);
  auto out = model.forward(x.data(), n);
  std::vector<float> dout(n * c);
  LossSum s = softmax_cross_entropy(out.data(), labels.data(), n, c, grad_scale, dout.data());
  model.backward(x.data(), dout.data(), n);
  return s.loss;
}

LocalEval evaluate_local(Model& model, const Dataset& data) {
  const int64_t n = data.test.size(), c = model.outputs();
  if (n == 0) return {};
  auto out = model.forward(data.test.x.data(), n);
  LossSum s = softmax_cross_entropy(out.data(), data.test.labels.data(), n, c, 1.0f, nullptr);
  return {s.loss / double(n), double(s.correct) / double(n)};
}

double max_difference_from_rank0(Communicator& comm, std::span<const float> values) {
  std::vector<float> root(values.begin(), values.end());
  broadcast(comm, root, 0);
  float local = 0;
  for (size_t i = 0; i < values.size(); ++i)
    local = std::max(local, std::abs(values[i] - root[i]));
  std::vector<float> max{local};
  all_reduce(comm, max, ReduceOp::MAX);
  return max[0];
}

double max_abs_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i)
    d = std::max(d, double(std::abs(a[i] - b[i])));
  return d;
}

std::string describe_difference(double max_abs, Lang lang) {
  const bool zh = lang == Lang::zh;
  if (max_abs == 0) return zh ? "完全相同" : "identical";
  if (max_abs < 1e-5)
    return zh ? "在浮点舍入误差内相同 (< 1e-5)" : "equal to float rounding (< 1e-5)";
  return zh ? fmt::format("最多相差 {:.2g}", max_abs)
            : fmt::format("differ by up to {:.2g}", max_abs);
}

}  // namespace dsgd::lessons
