// cnn:lenet against PyTorch: the same network written with nn.Conv2d, nn.MaxPool2d and
// nn.Linear (tests/data/torch/make_lenet.py), its parameters loaded into dsgd's Model, gives
// the same logits, loss and gradients on a fixed batch, and the same parameters after three
// SGD steps. Also the layer bookkeeping the trainer relies on (names, shapes, layer order).
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/io/npz.h"
#include "core/nn/blas.h"
#include "core/nn/loss.h"
#include "core/nn/model.h"
#include "core/nn/sgd.h"
#include "param_diff.h"

using namespace dsgd;

namespace {

const std::vector<NamedTensor>& cnn_fixture() {
  static const std::vector<NamedTensor> entries =
      read_npz(std::string(DSGD_SOURCE_DIR) + "/tests/data/torch/lenet.npz");
  return entries;
}

const Tensor& entry(int side, const std::string& what) {
  const std::string name = "side" + std::to_string(side) + "/" + what;
  for (const NamedTensor& t : cnn_fixture())
    if (t.name == name) return t.tensor;
  FAIL("lenet.npz has no " << name);
  throw std::logic_error("unreachable");
}

// The cnn_fixture's tensors `prefix`.NAME renamed NAME, in the model's parameter order.
std::vector<NamedTensor> named(int side, const std::string& prefix, const Model& model) {
  std::vector<NamedTensor> out;
  for (const ParamInfo& p : model.params())
    out.push_back({p.name, entry(side, prefix + "." + p.name)});
  return out;
}

// One training step's forward, mean cross-entropy and backward on the cnn_fixture's batch.
struct Step {
  std::vector<float> logits;
  double loss = 0;
};

Step forward_backward(Model& model, int side) {
  const Tensor& x = entry(side, "x");
  const Tensor& y = entry(side, "y");
  const int64_t n = y.numel(), c = model.outputs();
  std::vector<int32_t> labels(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    labels[i] = static_cast<int32_t>(y[i]);
  model.zero_grad();
  auto out = model.forward(x.data(), n);
  Step s{{out.begin(), out.end()}, 0};
  std::vector<float> dout(static_cast<size_t>(n * c));
  s.loss =
      softmax_cross_entropy(out.data(), labels.data(), n, c, 1.0f / float(n), dout.data()).loss /
      double(n);
  model.backward(x.data(), dout.data(), n);
  return s;
}

Model loaded(int side) {
  set_blas_threads(1);  // as dsgd runs OpenBLAS (and ThreadSanitizer cannot see its pool)
  const int64_t classes = entry(side, "logits").numel() / entry(side, "y").numel();
  Model model = Model::from_spec(ModelSpec::parse("cnn:lenet"), int64_t(side) * side, classes);
  model.load_state(named(side, "params", model), "lenet.npz");
  return model;
}

std::vector<NamedTensor> gradients(const Model& model) {
  std::vector<NamedTensor> out;
  for (const ParamInfo& p : model.params()) {
    auto first = model.grads().begin() + p.offset;
    out.push_back({p.name, Tensor(p.shape, std::vector<float>(first, first + p.numel))});
  }
  return out;
}

}  // namespace

TEST_CASE("cnn:lenet has PyTorch's parameter names and shapes", "[cnn]") {
  const Model model = Model::from_spec(ModelSpec::parse("cnn:lenet"), 784, 10);
  const std::vector<std::pair<std::string, Shape>> expected{
      {"layers.0.weight", {6, 1, 5, 5}},  {"layers.0.bias", {6}},
      {"layers.1.weight", {16, 6, 5, 5}}, {"layers.1.bias", {16}},
      {"layers.2.weight", {120, 400}},    {"layers.2.bias", {120}},
      {"layers.3.weight", {10, 120}},     {"layers.3.bias", {10}}};
  REQUIRE(model.params().size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    CHECK(model.params()[i].name == expected[i].first);
    CHECK(model.params()[i].shape == expected[i].second);
  }
  CHECK(model.num_params() == 51902);
  CHECK(model.num_layers() == 4);
  CHECK(model.mlp_sizes().empty());
  CHECK(model.inputs() == 784);
  CHECK(model.outputs() == 10);
  CHECK(ModelSpec::parse("cnn:lenet").str() == "cnn:lenet");
}

TEST_CASE("cnn:lenet matches PyTorch's logits, loss and gradients", "[cnn]") {
  for (int side : {28, 13}) {
    INFO("image side " << side);
    Model model = loaded(side);
    const Step s = forward_backward(model, side);
    const Tensor& logits = entry(side, "logits");
    REQUIRE(s.logits.size() == size_t(logits.numel()));
    double worst = 0;
    for (int64_t i = 0; i < logits.numel(); ++i)
      worst = std::max(worst, double(std::abs(s.logits[i] - logits[i])));
    CHECK(worst < 1e-5);
    CHECK(s.loss == Approx(entry(side, "loss")[0]).epsilon(1e-6));
    CHECK(max_rel_diff(gradients(model), named(side, "grads", model)) < 1e-5);
  }
}

TEST_CASE("cnn:lenet after three SGD steps matches torch.optim.SGD", "[cnn]") {
  Model model = loaded(13);
  Sgd sgd({.lr = 0.1f, .momentum = 0.9f}, model.num_params());
  for (int step = 0; step < 3; ++step) {
    forward_backward(model, 13);
    sgd.step(model.values(), model.grads());
  }
  CHECK(max_rel_diff(model.state(), named(13, "after", model)) < 1e-5);
}

TEST_CASE("cnn:lenet reports its layers done from the last one down", "[cnn]") {
  Model model = loaded(13);
  const Tensor& x = entry(13, "x");
  const int64_t n = entry(13, "y").numel();
  auto out = model.forward(x.data(), n);
  std::vector<float> dout(out.begin(), out.end());
  std::vector<int64_t> order;
  model.zero_grad();
  model.backward(x.data(), dout.data(), n, [&](int64_t layer) { order.push_back(layer); });
  CHECK(order == std::vector<int64_t>{3, 2, 1, 0});
}

TEST_CASE("cnn:lenet initialises as nn.Conv2d and nn.Linear do, from the seed", "[cnn]") {
  Model a = Model::from_spec(ModelSpec::parse("cnn:lenet"), 784, 10);
  Model b = Model::from_spec(ModelSpec::parse("cnn:lenet"), 784, 10);
  a.init(5);
  b.init(5);
  CHECK(max_rel_diff(a.state(), b.state()) == 0.0);
  const std::vector<double> fan_in{25, 25, 150, 150, 400, 400, 120, 120};
  for (size_t i = 0; i < a.params().size(); ++i) {
    const ParamInfo& p = a.params()[i];
    const double bound = 1.0 / std::sqrt(fan_in[i]);
    double largest = 0;
    for (int64_t k = 0; k < p.numel; ++k)
      largest = std::max(largest, double(std::abs(a.values()[p.offset + k])));
    INFO(p.name);
    CHECK(largest <= bound);
    CHECK(largest > 0.9 * bound);  // the draws fill the range
  }
}

TEST_CASE("cnn:lenet refuses data that are not square images, and unknown networks", "[cnn]") {
  const ModelSpec lenet = ModelSpec::parse("cnn:lenet");
  CHECK_THROWS_WITH(Model::from_spec(lenet, 32, 10),
                    Catch::Contains("square grey image of at least 12x12") &&
                        Catch::Contains("these data have 32 features"));
  CHECK_THROWS_AS(Model::from_spec(lenet, 121, 10), UsageError);  // 11x11: too small
  CHECK_NOTHROW(Model::from_spec(lenet, 144, 10));
  CHECK_THROWS_WITH(ModelSpec::parse("cnn:resnet"), Catch::Contains("cnn:lenet"));
  CHECK_THROWS_WITH(ModelSpec::parse("cnn"), Catch::Contains("cnn:lenet"));
}
