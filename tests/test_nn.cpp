// Tests for core/nn: gemm, ModelSpec, Model layout, init, forward/backward (finite
// differences and a PyTorch reference run), and load_state errors.
// Notation: n = rows, D = in features, O = outputs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "core/errors.h"
#include "core/io/npz.h"
#include "core/nn/blas.h"
#include "core/nn/loss.h"
#include "core/nn/model.h"
#include "core/nn/sgd.h"
#include "random_values.h"

using namespace dsgd;
using dsgd::test::random_vector;

namespace {

// Reference C = op(A) op(B) in double, A and B row-major with row strides lda, ldb.
std::vector<double> naive_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                               const std::vector<float>& a, int64_t lda,
                               const std::vector<float>& b, int64_t ldb) {
  std::vector<double> c(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p) {
        double av = ta ? a[p * lda + i] : a[i * lda + p];
        double bv = tb ? b[j * ldb + p] : b[p * ldb + j];
        c[i * n + j] += av * bv;
      }
  return c;
}

// Reference forward in double: relu between layers, nn.Linear layout.
std::vector<double> naive_forward(const Model& m, const std::vector<float>& x, int64_t n) {
  std::vector<double> in(x.begin(), x.end());
  const auto& sizes = m.mlp_sizes();
  for (int64_t l = 0; l + 1 < static_cast<int64_t>(sizes.size()); ++l) {
    const int64_t di = sizes[l], dout = sizes[l + 1];
    const float* w = m.values().data() + m.params()[2 * l].offset;
    const float* b = m.values().data() + m.params()[2 * l + 1].offset;
    std::vector<double> out(static_cast<size_t>(n * dout));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t o = 0; o < dout; ++o) {
        double s = b[o];
        for (int64_t d = 0; d < di; ++d)
          s += in[i * di + d] * w[o * di + d];
        out[i * dout + o] = (l + 2 < static_cast<int64_t>(sizes.size())) ? std::max(s, 0.0) : s;
      }
    in = std::move(out);
  }
  return in;
}

struct GradCheck {
  double rel_err = 0;        // |num - ana| / |ana| over the whole vector
  int64_t bad_elements = 0;  // elements outside abs + rel * |ana|
};

GradCheck compare_gradients(const std::vector<double>& numeric, const std::vector<float>& analytic,
                            double abs_tol, double rel_tol) {
  GradCheck r;
  double diff2 = 0, ana2 = 0;
  for (size_t i = 0; i < numeric.size(); ++i) {
    double d = numeric[i] - analytic[i];
    diff2 += d * d;
    ana2 += static_cast<double>(analytic[i]) * analytic[i];
    if (std::abs(d) > abs_tol + rel_tol * std::abs(analytic[i])) ++r.bad_elements;
  }
  r.rel_err = std::sqrt(diff2 / ana2);
  return r;
}

// L = sum_ij r_ij * out_ij, so dL/dout = r. Evaluated with the float forward, summed in double.
double weighted_output(Model& m, const std::vector<float>& x, int64_t n,
                       const std::vector<float>& r) {
  auto out = m.forward(x.data(), n);
  double s = 0;
  for (size_t i = 0; i < out.size(); ++i)
    s += static_cast<double>(out[i]) * r[i];
  return s;
}

// Central differences over every parameter, in double, of the float forward.
std::vector<double> numeric_gradient(Model& m, const std::vector<float>& x, int64_t n,
                                     const std::vector<float>& r, float eps) {
  std::vector<double> g(static_cast<size_t>(m.num_params()));
  auto v = m.values();
  for (size_t i = 0; i < v.size(); ++i) {
    const float saved = v[i];
    v[i] = saved + eps;
    const double up = weighted_output(m, x, n, r);
    const float up_step = v[i] - saved;  // the step actually taken in float
    v[i] = saved - eps;
    const double down = weighted_output(m, x, n, r);
    const float down_step = saved - v[i];
    v[i] = saved;
    g[i] = (up - down) / (static_cast<double>(up_step) + down_step);
  }
  return g;
}

std::vector<float> analytic_gradient(Model& m, const std::vector<float>& x, int64_t n,
                                     const std::vector<float>& r) {
  m.zero_grad();
  m.forward(x.data(), n);
  m.backward(x.data(), r.data(), n);
  auto g = m.grads();
  return {g.begin(), g.end()};
}

}  // namespace

// --- gemm -----------------------------------------------------------------------------

TEST_CASE("gemm matches a naive product for every transpose and padded strides", "[nn][blas]") {
  const int64_t m = 5, n = 7, k = 3, pad = 2;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      const int64_t lda = (ta ? m : k) + pad, ldb = (tb ? k : n) + pad, ldc = n + pad;
      auto a = random_vector(static_cast<size_t>((ta ? k : m) * lda), 1);
      auto b = random_vector(static_cast<size_t>((tb ? n : k) * ldb), 2);
      std::vector<float> c(static_cast<size_t>(m * ldc), 0.5f);
      gemm(ta, tb, m, n, k, 2.0f, a.data(), lda, b.data(), ldb, 3.0f, c.data(), ldc);
      auto ref = naive_gemm(ta, tb, m, n, k, a, lda, b, ldb);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j)
          REQUIRE(c[i * ldc + j] == Approx(2.0 * ref[i * n + j] + 1.5).margin(1e-5));
        for (int64_t j = n; j < ldc; ++j)
          REQUIRE(c[i * ldc + j] == 0.5f);  // padding untouched
      }
    }
}

TEST_CASE("gemm with k = 0 scales C, with m = 0 does nothing", "[nn][blas]") {
  std::vector<float> c{1.0f, 2.0f, 3.0f, 4.0f};
  gemm(false, false, 2, 2, 0, 1.0f, nullptr, 1, nullptr, 2, 0.5f, c.data(), 2);
  CHECK(c == std::vector<float>{0.5f, 1.0f, 1.5f, 2.0f});
  gemm(false, false, 2, 2, 0, 1.0f, nullptr, 1, nullptr, 2, 0.0f, c.data(), 2);
  CHECK(c == std::vector<float>{0.0f, 0.0f, 0.0f, 0.0f});
  c = {7.0f};
  gemm(false, false, 0, 1, 3, 1.0f, nullptr, 3, nullptr, 1, 0.0f, c.data(), 1);
  CHECK(c[0] == 7.0f);
}

TEST_CASE("blas threads can be set to one", "[nn][blas]") {
  set_blas_threads(1);
  CHECK(blas_threads() == 1);
  CHECK_THROWS_AS(set_blas_threads(0), std::invalid_argument);
}

// --- ModelSpec --------------------------------------------------------------------------

TEST_CASE("ModelSpec parses the valid forms and prints them back", "[nn][spec]") {
  CHECK(ModelSpec::parse("softmax").kind == ModelSpec::Kind::softmax);
  CHECK(ModelSpec::parse("softmax").hidden.empty());
  CHECK(ModelSpec::parse("linear").kind == ModelSpec::Kind::linear);
  ModelSpec one = ModelSpec::parse("mlp:128");
  CHECK(one.kind == ModelSpec::Kind::mlp);
  CHECK(one.hidden == std::vector<int64_t>{128});
  ModelSpec two = ModelSpec::parse(" mlp:256, 128 ");
  CHECK(two.hidden == std::vector<int64_t>{256, 128});
  CHECK(two.str() == "mlp:256,128");
  CHECK(ModelSpec::parse("mlp:1048576").hidden == std::vector<int64_t>{1048576});
  for (const char* text : {"softmax", "linear", "mlp:1", "mlp:128,64,32"})
    CHECK(ModelSpec::parse(text).str() == text);
}

TEST_CASE("ModelSpec rejects bad forms with a UsageError listing the valid ones", "[nn][spec]") {
  for (const char* text :
       {"", "mlp", "mlp:", "mlp:0", "mlp:abc", "mlp:-5", "mlp:12x", "mlp:128,", "mlp:,64",
        "mlp:128,,64", "mlp:1048577", "mlp:99999999999", "mlp:1.5", "Softmax", "cnn", "mlp128"}) {
    INFO("--model " << text);
    try {
      ModelSpec::parse(text);
      FAIL("accepted");
    } catch (const UsageError& e) {
      CHECK_THAT(e.what(), Catch::Contains("valid forms: softmax, linear, mlp:H[,H...]"));
    }
  }
}

// --- Model layout -------------------------------------------------------------------------

TEST_CASE("Model names, shapes and offsets follow nn.ModuleList of nn.Linear", "[nn][model]") {
  Model m({784, 128, 64, 10}, 3);
  const auto& p = m.params();
  REQUIRE(p.size() == 6);
  const char* names[] = {"layers.0.weight", "layers.0.bias",   "layers.1.weight",
                         "layers.1.bias",   "layers.2.weight", "layers.2.bias"};
  const Shape shapes[] = {{128, 784}, {128}, {64, 128}, {64}, {10, 64}, {10}};
  int64_t offset = 0;
  for (size_t i = 0; i < 6; ++i) {
    CHECK(p[i].name == names[i]);
    CHECK(p[i].shape == shapes[i]);
    CHECK(p[i].offset == offset);
    CHECK(p[i].numel == shape_numel(shapes[i]));
    offset += p[i].numel;
  }
  CHECK(m.num_params() == 784 * 128 + 128 + 128 * 64 + 64 + 64 * 10 + 10);
  CHECK(m.num_params() == offset);
  CHECK(m.values().size() == static_cast<size_t>(offset));
  CHECK(m.grads().size() == static_cast<size_t>(offset));
  CHECK(m.grad_buffer().size() == static_cast<size_t>(offset + 3));
  CHECK(m.num_layers() == 3);
}

TEST_CASE("Model::from_spec builds D -> hidden -> O", "[nn][model]") {
  CHECK(Model::from_spec(ModelSpec::parse("mlp:128,64"), 784, 10).mlp_sizes() ==
        std::vector<int64_t>{784, 128, 64, 10});
  CHECK(Model::from_spec(ModelSpec::parse("softmax"), 784, 10).mlp_sizes() ==
        std::vector<int64_t>{784, 10});
  CHECK(Model::from_spec(ModelSpec::parse("linear"), 13, 1).mlp_sizes() ==
        std::vector<int64_t>{13, 1});
  CHECK_THROWS_AS(Model::from_spec(ModelSpec::parse("softmax"), 0, 10), UsageError);
  CHECK_THROWS_AS(Model({5}), UsageError);
  CHECK_THROWS_AS(Model({5, 3}, -1), UsageError);
  // 2^20 x 2^20 weights would need 4 TiB: refused before allocating.
  CHECK_THROWS_AS(Model::from_spec(ModelSpec::parse("mlp:1048576,1048576"), 10, 10), UsageError);
}

TEST_CASE("zero_grad clears the whole grad buffer, extra slots included", "[nn][model]") {
  Model m({3, 2}, 2);
  for (float& g : m.grad_buffer())
    g = 1.0f;
  m.zero_grad();
  for (float g : m.grad_buffer())
    CHECK(g == 0.0f);
}

// --- init -------------------------------------------------------------------------------

TEST_CASE("init is deterministic, seed dependent and within nn.Linear's bounds", "[nn][init]") {
  Model a({784, 128, 10}), b({784, 128, 10});
  a.init(42);
  b.init(42);
  CHECK(std::equal(a.values().begin(), a.values().end(), b.values().begin()));
  b.init(43);
  CHECK_FALSE(std::equal(a.values().begin(), a.values().end(), b.values().begin()));
  for (const ParamInfo& p : a.params()) {
    const int64_t fan_in = p.name.find(".0.") != std::string::npos ? 784 : 128;
    const float bound = static_cast<float>(1.0 / std::sqrt(static_cast<double>(fan_in)));
    float lo = bound, hi = -bound;
    double sum = 0;
    for (int64_t i = 0; i < p.numel; ++i) {
      float v = a.values()[p.offset + i];
      REQUIRE(std::abs(v) <= bound);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      sum += v;
    }
    INFO(p.name);
    if (p.numel < 100) continue;  // too few draws for the statistics below
    CHECK(lo < -0.8f * bound);    // the whole interval is used
    CHECK(hi > 0.8f * bound);
    CHECK(std::abs(sum / p.numel) < 0.2 * bound);  // centred
  }
}

TEST_CASE("init draws a fixed xoshiro256** stream", "[nn][init]") {
  // Golden values: the same numbers on every platform (checked once against a Python
  // transcription of splitmix64 + xoshiro256**; bound = 1/sqrt(4) = 0.5).
  Model m({4, 3});
  m.init(0);
  const std::vector<float> expected{0.101262987f,  0.247774065f, -0.396980047f,  -0.0834109783f,
                                    0.232996762f,  0.499748409f, -0.0777885318f, 0.0356548429f,
                                    0.355517149f,  0.418857992f, -0.38570255f,   -0.432768166f,
                                    -0.393325388f, 0.154833138f, -0.00394189358f};
  REQUIRE(m.values().size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i)
    CHECK(m.values()[i] == expected[i]);
}

// --- forward and backward ---------------------------------------------------------------

TEST_CASE("forward matches a naive double-precision forward", "[nn][forward]") {
  Model m({5, 7, 4, 3});
  m.init(3);
  for (int64_t n : {1, 6, 2, 33}) {  // the workspace grows and is reused
    auto x = random_vector(static_cast<size_t>(n * 5), 10 + static_cast<uint32_t>(n));
    auto out = m.forward(x.data(), n);
    auto ref = naive_forward(m, x, n);
    REQUIRE(out.size() == ref.size());
    for (size_t i = 0; i < ref.size(); ++i)
      CHECK(out[i] == Approx(ref[i]).margin(1e-5));
  }
}

TEST_CASE("forward and backward with zero rows", "[nn][forward]") {
  Model m({5, 7, 3});
  m.init(1);
  CHECK(m.forward(nullptr, 0).empty());
  m.zero_grad();
  m.backward(nullptr, nullptr, 0);
  for (float g : m.grads())
    CHECK(g == 0.0f);
}

TEST_CASE("backward needs the forward of the same rows", "[nn][backward]") {
  Model m({2, 2});
  std::vector<float> x{1, 2, 3, 4}, dout{1, 1, 1, 1};
  CHECK_THROWS_AS(m.backward(x.data(), dout.data(), 2), std::logic_error);
  m.forward(x.data(), 1);
  CHECK_THROWS_AS(m.backward(x.data(), dout.data(), 2), std::logic_error);
}

TEST_CASE("backward matches finite differences", "[nn][backward]") {
  const int64_t n = 6;
  for (const std::vector<int64_t>& sizes :
       {std::vector<int64_t>{5, 3}, std::vector<int64_t>{5, 7, 4, 3},
        std::vector<int64_t>{4, 16, 1}}) {
    INFO("sizes " << sizes.size() << " layers, D = " << sizes.front());
    Model m(sizes);
    m.init(7);
    auto x = random_vector(static_cast<size_t>(n * sizes.front()), 21);
    auto r = random_vector(static_cast<size_t>(n * sizes.back()), 22);
    auto analytic = analytic_gradient(m, x, n, r);
    auto numeric = numeric_gradient(m, x, n, r, 1e-3f);
    GradCheck ok = compare_gradients(numeric, analytic, 1e-3, 1e-2);
    CHECK(ok.rel_err < 1e-3);
    CHECK(ok.bad_elements == 0);

    // The same check must catch a wrong gradient: one element 10% off, or all 2% off.
    auto one_off = analytic;
    size_t biggest = 0;
    for (size_t i = 0; i < one_off.size(); ++i)
      if (std::abs(one_off[i]) > std::abs(one_off[biggest])) biggest = i;
    one_off[biggest] *= 1.1f;
    CHECK(compare_gradients(numeric, one_off, 1e-3, 1e-2).bad_elements > 0);
    auto all_off = analytic;
    for (float& g : all_off)
      g *= 1.02f;
    CHECK(compare_gradients(numeric, all_off, 1e-3, 1e-2).rel_err > 1e-2);
  }
}

TEST_CASE("backward accumulates into grads: two calls give twice one", "[nn][backward]") {
  Model m({5, 7, 4, 3}, 1);
  m.init(11);
  auto x = random_vector(30, 1);
  auto dout = random_vector(18, 2);
  m.zero_grad();
  m.forward(x.data(), 6);
  m.backward(x.data(), dout.data(), 6);
  std::vector<float> once(m.grads().begin(), m.grads().end());
  m.backward(x.data(), dout.data(), 6);
  bool some_nonzero = false;
  for (size_t i = 0; i < once.size(); ++i) {
    CHECK(m.grads()[i] == Approx(2.0 * once[i]).margin(1e-6));
    some_nonzero |= once[i] != 0.0f;
  }
  CHECK(some_nonzero);
  CHECK(m.grad_buffer().back() == 0.0f);  // extra slot untouched
}

TEST_CASE("a training run matches PyTorch: MLP 3-4-3, cross-entropy, Nesterov SGD", "[nn][torch]") {
  // Reference produced once with torch 1.13 (/usr/bin/python3):
  //   net = Sequential(Linear(3, 4), ReLU(), Linear(4, 3)) with the weights below,
  //   opt = SGD(net.parameters(), lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=True)
  //   3 x { zero_grad; loss = F.cross_entropy(net(x), y); loss.backward(); opt.step() }
  //   printing loss.item(), parameters_to_vector(grads) at step 0 and parameters at the end.
  // Several hidden pre-activations are negative, so the ReLU mask matters.
  Model m({3, 4, 3});
  const std::vector<float> init{0.5f,  -0.25f, 0.75f, -0.5f,  0.5f,  -1.0f, 0.25f,
                                0.25f, 0.25f,  1.0f,  -0.75f, 0.0f,  // layers.0.weight (4, 3)
                                0.1f,  -0.2f,  0.0f,  0.05f,         // layers.0.bias (4)
                                0.3f,  -0.6f,  0.2f,  0.9f,   -0.4f, 0.1f,  0.7f,
                                -0.2f, 0.5f,   0.5f,  -0.5f,  0.25f,  // layers.1.weight (3, 4)
                                0.0f,  0.1f,   -0.1f};                // layers.1.bias (3)
  std::copy(init.begin(), init.end(), m.values().begin());
  const std::vector<float> x{1.0f,  2.0f, -1.0f, 0.5f, -0.5f, 0.25f,
                             -1.5f, 0.0f, 2.0f,  0.0f, 1.0f,  1.0f};  // (4, 3)
  const std::vector<int32_t> y{0, 2, 1, 1};
  const double losses[] = {1.40469289, 1.19399107, 0.990908921};
  const std::vector<float> grads0{
      -0.25584951f,   0.157086059f,  0.413018227f,  0.18771866f,   0.375437319f,   -0.18771866f,
      0.305892825f,   -0.205781579f, -0.408899248f, 0.0370122567f, -0.0370122567f, 0.0185061283f,
      0.217392892f,   0.18771866f,   -0.151246563f, 0.0740245134f, 0.22927779f,    -0.279797554f,
      -0.0399182737f, 0.128384188f,  -0.233513594f, 0.159357652f,  -0.041045174f,  0.033282347f,
      0.00423582038f, 0.120439917f,  0.0809634626f, -0.161666527f, 0.112859093f,   -0.191873282f,
      0.0790142193f};
  const std::vector<float> final_params{
      0.668323815f,   -0.359247684f, 0.477460146f,  -0.628518939f,   0.230909571f,   -0.859428465f,
      0.0261074454f,  0.395181835f,  0.52972585f,   0.967756927f,    -0.719765723f,  -0.012103972f,
      -0.0305017903f, -0.330929428f, 0.084113352f,  0.0011823558f,   0.149616554f,   -0.413828075f,
      0.202856511f,   0.796593785f,  -0.274564922f, -0.00748166954f, 0.759657979f,   -0.227242351f,
      0.521734297f,   0.421309769f,  -0.565728545f, 0.373015165f,    -0.0818801224f, 0.216757566f,
      -0.134877458f};

  Sgd sgd({.lr = 0.1f, .momentum = 0.9f, .weight_decay = 0.01f, .nesterov = true}, m.num_params());
  std::vector<float> dlogits(12);
  for (int step = 0; step < 3; ++step) {
    m.zero_grad();
    auto logits = m.forward(x.data(), 4);
    LossSum ls = softmax_cross_entropy(logits.data(), y.data(), 4, 3, 1.0f / 4, dlogits.data());
    m.backward(x.data(), dlogits.data(), 4);
    CHECK(ls.loss / 4 == Approx(losses[step]).epsilon(1e-6));
    if (step == 0)
      for (size_t i = 0; i < grads0.size(); ++i)
        CHECK(m.grads()[i] == Approx(grads0[i]).margin(1e-6));
    sgd.step(m.values(), m.grads());
  }
  for (size_t i = 0; i < final_params.size(); ++i)
    CHECK(m.values()[i] == Approx(final_params[i]).margin(2e-6));
}

// --- state and load_state ---------------------------------------------------------------

TEST_CASE("state copies parameters out and load_state puts them back", "[nn][state]") {
  Model a({6, 5, 2}), b({6, 5, 2});
  a.init(1);
  b.init(2);
  auto st = a.state();
  REQUIRE(st.size() == a.params().size());
  for (size_t i = 0; i < st.size(); ++i) {
    CHECK(st[i].name == a.params()[i].name);
    CHECK(st[i].tensor.shape() == a.params()[i].shape);
    CHECK(std::equal(st[i].tensor.span().begin(), st[i].tensor.span().end(),
                     a.values().begin() + a.params()[i].offset));
  }
  const float saved = st[0].tensor[0];
  st[0].tensor[0] = 9.0f;  // a copy: the model is unchanged
  CHECK(a.values()[0] == saved);
  st[0].tensor[0] = saved;
  std::reverse(st.begin(), st.end());  // order does not matter, names do
  b.load_state(st, "test");
  CHECK(std::equal(a.values().begin(), a.values().end(), b.values().begin()));
}

TEST_CASE("load_state names the tensor, the found and the needed shape", "[nn][state]") {
  Model model({784, 128, 10});
  model.init(5);
  const std::vector<float> before(model.values().begin(), model.values().end());
  auto expect_error = [&](const std::vector<NamedTensor>& st, const std::string& message) {
    try {
      model.load_state(st, "--init params.npz");
      FAIL("loaded");
    } catch (const DataError& e) {
      CHECK(std::string(e.what()) == message);
    }
    // A failed load changes nothing.
    CHECK(std::equal(before.begin(), before.end(), model.values().begin()));
  };

  expect_error(Model({10, 64, 10}).state(),
               "--init params.npz: layers.0.weight has shape (64, 10), the model needs (128, "
               "784); train with the same --model and --data");
  auto st = model.state();
  st.pop_back();
  expect_error(st,
               "--init params.npz: has no layers.1.bias, the model needs one of shape (10,); "
               "train with the same --model and --data");
  st = model.state();
  st.push_back({"layers.2.weight", Tensor({3, 3})});
  expect_error(st,
               "--init params.npz: layers.2.weight is not a parameter of this model (layers.0 "
               "to layers.1); train with the same --model and --data");
  st = model.state();
  st.push_back(st[1]);
  expect_error(st, "--init params.npz: layers.0.bias appears twice");
  st = model.state();
  st[3].tensor = Tensor({1, 10});
  expect_error(st,
               "--init params.npz: layers.1.bias has shape (1, 10), the model needs (10,); "
               "train with the same --model and --data");
}
