// Tests for core/nn/loss: known values, PyTorch references, finite differences, and the
// slicing contract (per-rank sums with grad_scale = 1/B add up to the full-batch mean).
// Notation: n = rows, C = classes, K = regression outputs.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "core/errors.h"
#include "core/nn/loss.h"
#include "random_values.h"

using namespace dsgd;
using dsgd::test::random_vector;

namespace {

// Central differences of a loss (float inputs, double result) with respect to every input.
std::vector<double> loss_numeric_gradient(std::vector<float> in,
                                          const std::function<double(const std::vector<float>&)>& f,
                                          float eps) {
  std::vector<double> g(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const float saved = in[i];
    in[i] = saved + eps;
    const double up = f(in);
    const double step_up = static_cast<double>(in[i]) - saved;
    in[i] = saved - eps;
    const double down = f(in);
    const double step_down = saved - static_cast<double>(in[i]);
    in[i] = saved;
    g[i] = (up - down) / (step_up + step_down);
  }
  return g;
}

// Whole-vector relative error, and how many elements miss abs + rel * |analytic|.
std::pair<double, int> grad_error(const std::vector<double>& numeric,
                                  const std::vector<float>& analytic) {
  double diff2 = 0, ana2 = 0;
  int bad = 0;
  for (size_t i = 0; i < numeric.size(); ++i) {
    double d = numeric[i] - analytic[i];
    diff2 += d * d;
    ana2 += static_cast<double>(analytic[i]) * analytic[i];
    if (std::abs(d) > 1e-4 + 1e-2 * std::abs(analytic[i])) ++bad;
  }
  return {std::sqrt(diff2 / ana2), bad};
}

}  // namespace

// --- cross-entropy ----------------------------------------------------------------------

TEST_CASE("cross-entropy of uniform logits is log(C)", "[loss][ce]") {
  const int64_t n = 3, c = 10;
  std::vector<float> logits(n * c, 0.7f), d(n * c);
  std::vector<int32_t> labels{0, 4, 9};
  LossSum s = softmax_cross_entropy(logits.data(), labels.data(), n, c, 0.5f, d.data());
  CHECK(s.loss == Approx(3 * std::log(10.0)).epsilon(1e-6));
  CHECK(s.correct == 1);  // ties go to index 0, as torch.argmax
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < c; ++j)
      CHECK(d[i * c + j] == Approx(0.5 * (0.1 - (j == labels[i]))).margin(1e-7));
}

TEST_CASE("cross-entropy matches F.cross_entropy", "[loss][ce]") {
  // /usr/bin/python3, torch 1.13:
  //   logits = torch.tensor([[0.5,-1,2,0.25],[1.5,1.5,-0.5,0],[-2,0.75,0.1,3]], requires_grad=True)
  //   l = F.cross_entropy(logits, torch.tensor([2, 1, 0])); l.backward(); l.item(), logits.grad
  const std::vector<float> logits{0.5f,  -1.0f, 2.0f,  0.25f, 1.5f, 1.5f,
                                  -0.5f, 0.0f,  -2.0f, 0.75f, 0.1f, 3.0f};
  const std::vector<int32_t> labels{2, 1, 0};
  const std::vector<float> grad{0.0514115989f, 0.0114714792f, -0.102922522f, 0.0400393978f,
                                0.141334832f,  -0.191998512f, 0.0191275887f, 0.031536065f,
                                -0.331409037f, 0.0301013291f, 0.015714271f,  0.28559345f};
  std::vector<float> d(12);
  LossSum s = softmax_cross_entropy(logits.data(), labels.data(), 3, 4, 1.0f / 3, d.data());
  CHECK(s.loss / 3 == Approx(2.1272881031).epsilon(1e-7));
  CHECK(s.correct == 1);  // row 0 only; row 1 ties at 1.5 and argmax takes 0, not 1
  for (size_t i = 0; i < grad.size(); ++i)
    CHECK(d[i] == Approx(grad[i]).margin(2e-8));
}

TEST_CASE("cross-entropy is stable for large logits", "[loss][ce]") {
  // F.cross_entropy(torch.tensor([[1000., 1001., 999.]]), torch.tensor([1])) = 0.407605946064,
  // gradient (0.244728491, -0.334758997, 0.0900305808).
  const std::vector<float> logits{1000.0f, 1001.0f, 999.0f};
  const int32_t label = 1;
  std::vector<float> d(3);
  LossSum s = softmax_cross_entropy(logits.data(), &label, 1, 3, 1.0f, d.data());
  CHECK(s.loss == Approx(0.407605946064).epsilon(1e-6));
  CHECK(s.correct == 1);
  CHECK(d[0] == Approx(0.244728491f).margin(1e-7));
  CHECK(d[1] == Approx(-0.334758997f).margin(1e-7));
  CHECK(d[2] == Approx(0.0900305808f).margin(1e-7));
}

TEST_CASE("cross-entropy rejects labels outside 0..C-1 with a DataError", "[loss][ce]") {
  std::vector<float> logits(6, 0.0f);
  for (std::vector<int32_t> labels : {std::vector<int32_t>{0, 3}, std::vector<int32_t>{-1, 0}}) {
    try {
      softmax_cross_entropy(logits.data(), labels.data(), 2, 3, 1.0f, nullptr);
      FAIL("accepted");
    } catch (const DataError& e) {
      CHECK_THAT(e.what(), Catch::Contains("outside 0..2") && Catch::Contains("3 outputs"));
    }
  }
}

TEST_CASE("cross-entropy without a gradient buffer only evaluates", "[loss][ce]") {
  const std::vector<float> logits{2.0f, 1.0f, 0.0f, 3.0f};
  const std::vector<int32_t> labels{0, 0};
  LossSum s = softmax_cross_entropy(logits.data(), labels.data(), 2, 2, 1.0f, nullptr);
  CHECK(s.correct == 1);
  CHECK(s.loss == Approx(std::log(1 + std::exp(-1.0)) + std::log(1 + std::exp(3.0))));
}

TEST_CASE("cross-entropy gradient matches finite differences", "[loss][ce]") {
  const int64_t n = 5, c = 7;
  const auto logits = random_vector(n * c, 1, -2.0f, 2.0f);
  const std::vector<int32_t> labels{0, 6, 3, 3, 1};
  std::vector<float> d(n * c);
  softmax_cross_entropy(logits.data(), labels.data(), n, c, 1.0f, d.data());
  auto f = [&](const std::vector<float>& l) {
    return softmax_cross_entropy(l.data(), labels.data(), n, c, 1.0f, nullptr).loss;
  };
  auto numeric = loss_numeric_gradient(logits, f, 1e-2f);
  auto [rel, bad] = grad_error(numeric, d);
  CHECK(rel < 1e-3);
  CHECK(bad == 0);
  // A gradient that forgets the one-hot term must fail the same check.
  auto broken = d;
  for (int64_t i = 0; i < n; ++i)
    broken[i * c + labels[i]] += 1.0f;
  auto [rel_broken, bad_broken] = grad_error(numeric, broken);
  CHECK(rel_broken > 1e-2);
  CHECK(bad_broken > 0);
}

// --- mean squared error -----------------------------------------------------------------

TEST_CASE("mse by hand", "[loss][mse]") {
  // Row 0: p = (1, 2), t = (0, 4): ((1)^2 + (-2)^2) / 2 = 2.5; dp = 2 (p - t) / 2 = (1, -2).
  // Row 1: p = (3, 0), t = (3, 4): (0 + 16) / 2 = 8; dp = (0, -4). argmax agrees only in row 0.
  // With grad_scale 0.5 the gradients halve.
  const std::vector<float> pred{1, 2, 3, 0}, target{0, 4, 3, 4};
  std::vector<float> d(4);
  LossSum s = mse(pred.data(), target.data(), 2, 2, 0.5f, d.data());
  CHECK(s.loss == 10.5);
  CHECK(s.correct == 1);
  CHECK(d == std::vector<float>{0.5f, -1.0f, 0.0f, -2.0f});
}

TEST_CASE("mse matches F.mse_loss and counts no accuracy for one output", "[loss][mse]") {
  // /usr/bin/python3, torch 1.13: pred = [[0.5,-1,2],[1.25,0,-0.75]], tgt =
  // [[1,-1,0],[0,0.5,-0.75]]
  //   F.mse_loss(pred, tgt) = 1.01041662693; grad (-1/6, 0, 2/3, 5/12, -1/6, 0).
  const std::vector<float> pred{0.5f, -1.0f, 2.0f, 1.25f, 0.0f, -0.75f};
  const std::vector<float> target{1.0f, -1.0f, 0.0f, 0.0f, 0.5f, -0.75f};
  const std::vector<float> grad{-0.166666672f, 0.0f,          0.666666687f,
                                0.416666687f,  -0.166666672f, 0.0f};
  std::vector<float> d(6);
  LossSum s = mse(pred.data(), target.data(), 2, 3, 0.5f, d.data());
  CHECK(s.loss / 2 == Approx(1.01041662693).epsilon(1e-7));  // torch's sum is float32
  for (size_t i = 0; i < grad.size(); ++i)
    CHECK(d[i] == Approx(grad[i]).margin(1e-7));
  CHECK(s.correct == 0);  // argmax (2 vs 0, 0 vs 1)

  // K = 1: a regression target; correct stays 0 even when the prediction is exact.
  const float p = 1.5f, t = 1.5f;
  CHECK(mse(&p, &t, 1, 1, 1.0f, nullptr).correct == 0);
  CHECK(mse(&p, &t, 1, 1, 1.0f, nullptr).loss == 0.0);
}

TEST_CASE("mse gradient matches finite differences", "[loss][mse]") {
  const int64_t n = 4, k = 3;
  const auto pred = random_vector(n * k, 2, -2.0f, 2.0f);
  const auto target = random_vector(n * k, 3, -2.0f, 2.0f);
  std::vector<float> d(n * k);
  mse(pred.data(), target.data(), n, k, 1.0f, d.data());
  auto f = [&](const std::vector<float>& p) {
    return mse(p.data(), target.data(), n, k, 1.0f, nullptr).loss;
  };
  auto numeric = loss_numeric_gradient(pred, f, 1e-2f);
  auto [rel, bad] = grad_error(numeric, d);
  CHECK(rel < 1e-4);
  CHECK(bad == 0);
  auto broken = d;  // missing the factor 2
  for (float& g : broken)
    g *= 0.5f;
  CHECK(grad_error(numeric, broken).first > 1e-2);
}

// --- the data-parallel contract ---------------------------------------------------------

TEST_CASE("slices with grad_scale 1/B sum to the full-batch mean", "[loss]") {
  const int64_t b = 7, c = 4;
  const auto logits = random_vector(b * c, 9, -2.0f, 2.0f);
  const std::vector<int32_t> labels{0, 1, 2, 3, 3, 2, 1};
  std::vector<float> full(b * c), parts(b * c);
  LossSum whole = softmax_cross_entropy(logits.data(), labels.data(), b, c, 1.0f / b, full.data());
  LossSum a = softmax_cross_entropy(logits.data(), labels.data(), 3, c, 1.0f / b, parts.data());
  LossSum r = softmax_cross_entropy(logits.data() + 3 * c, labels.data() + 3, 4, c, 1.0f / b,
                                    parts.data() + 3 * c);
  CHECK(a.loss + r.loss == Approx(whole.loss).epsilon(1e-12));
  CHECK(a.correct + r.correct == whole.correct);
  CHECK(parts == full);  // per-row gradients do not depend on the slicing
}
