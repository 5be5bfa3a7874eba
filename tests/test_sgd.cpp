// Tests for core/nn/sgd: the update of torch.optim.SGD for each option combination (values
// produced with torch), option validation, and the momentum buffer for checkpoints.
// Notation: P = parameters (5 here).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "core/errors.h"
#include "core/nn/sgd.h"

using namespace dsgd;

namespace {

const std::vector<float> kStart{0.5f, -1.25f, 2.0f, 0.75f, -0.3f};
const std::vector<std::vector<float>> kGrads{{0.1f, -0.2f, 0.3f, -0.4f, 0.5f},
                                             {-0.6f, 0.25f, 0.05f, 1.5f, -0.7f},
                                             {0.2f, 0.2f, -0.9f, 0.0f, 0.35f},
                                             {1.0f, -1.0f, 0.5f, -0.5f, 0.125f}};

struct Case {
  SgdOptions options;
  std::vector<std::vector<float>> after;  // parameters after each of the 4 steps
};

}  // namespace

TEST_CASE("Sgd matches torch.optim.SGD for every option combination", "[sgd]") {
  // Produced once with /usr/bin/python3, torch 1.13:
  //   p = nn.Parameter(torch.tensor(kStart)); opt = torch.optim.SGD([p], **options)
  //   for g in kGrads: p.grad = torch.tensor(g); opt.step(); print(p)
  const std::vector<Case> cases{
      {{.lr = 0.1f},
       {{0.49000001f, -1.23000002f, 1.97000003f, 0.790000021f, -0.350000024f},
        {0.550000012f, -1.255f, 1.96500003f, 0.640000045f, -0.280000031f},
        {0.530000031f, -1.27499998f, 2.05500007f, 0.640000045f, -0.315000027f},
        {0.430000037f, -1.17499995f, 2.00500011f, 0.690000057f, -0.327500015f}}},
      {{.lr = 0.1f, .weight_decay = 0.05f},
       {{0.487500012f, -1.22375f, 1.96000004f, 0.786249995f, -0.348500013f},
        {0.545062542f, -1.2426312f, 1.94520009f, 0.632318735f, -0.276757509f},
        {0.522337258f, -1.25641799f, 2.02547407f, 0.629157126f, -0.310373724f},
        {0.419725567f, -1.15013587f, 1.96534669f, 0.676011324f, -0.321321845f}}},
      {{.lr = 0.05f, .momentum = 0.9f},
       {{0.495000005f, -1.24000001f, 1.98500001f, 0.769999981f, -0.325000018f},
        {0.520500004f, -1.24349999f, 1.96899998f, 0.713f, -0.31250003f},
        {0.533450007f, -1.25664997f, 1.99959993f, 0.66170001f, -0.318750024f},
        {0.495104998f, -1.218485f, 2.00214005f, 0.64052999f, -0.330625027f}}},
      {{.lr = 0.05f, .momentum = 0.9f, .dampening = 0.3f},
       {{0.495000005f, -1.24000001f, 1.98500001f, 0.769999981f, -0.325000018f},
        {0.511500001f, -1.23975003f, 1.96975005f, 0.735499978f, -0.323000014f},
        {0.519349992f, -1.24652505f, 1.98752499f, 0.704449952f, -0.333450019f},
        {0.491414994f, -1.21762252f, 1.98602247f, 0.694004953f, -0.347230017f}}},
      {{.lr = 0.05f, .momentum = 0.8f, .dampening = 0.5f, .weight_decay = 0.01f},
       {{0.494749993f, -1.239375f, 1.98399997f, 0.769625008f, -0.324850023f},
        {0.505426288f, -1.23681509f, 1.96945393f, 0.747632623f, -0.327148825f},
        {0.508840978f, -1.23945796f, 1.97982478f, 0.729851782f, -0.337656081f},
        {0.486445516f, -1.21626246f, 1.9751265f, 0.727944672f, -0.349102467f}}},
      {{.lr = 0.05f, .momentum = 0.9f, .nesterov = true},
       {{0.490500003f, -1.23099995f, 1.97150004f, 0.787999988f, -0.347500026f},
        {0.543449998f, -1.24664998f, 1.9546001f, 0.66170001f, -0.301250041f},
        {0.54510498f, -1.26848495f, 2.02714014f, 0.615530014f, -0.324375033f},
        {0.460594475f, -1.18413639f, 2.00442624f, 0.621477008f, -0.341312528f}}},
      {{.lr = 0.02f, .momentum = 0.95f, .weight_decay = 0.1f, .nesterov = true},
       {{0.494150013f, -1.23732495f, 1.98049998f, 0.762674987f, -0.31833002f},
        {0.512915313f, -1.23638308f, 1.96180105f, 0.707066834f, -0.298272043f},
        {0.510480881f, -1.23606741f, 1.97619903f, 0.681430578f, -0.305608511f},
        {0.471951842f, -1.19049597f, 1.94929731f, 0.675261974f, -0.310178012f}}},
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    const SgdOptions& o = cases[c].options;
    INFO("case " << c << ": lr " << o.lr << " momentum " << o.momentum << " dampening "
                 << o.dampening << " weight_decay " << o.weight_decay << " nesterov "
                 << o.nesterov);
    Sgd sgd(o, 5);
    std::vector<float> p = kStart;
    for (size_t step = 0; step < kGrads.size(); ++step) {
      const std::vector<float> g = kGrads[step];
      sgd.step(p, g);
      CHECK(g == kGrads[step]);  // gradients are read only
      for (size_t i = 0; i < p.size(); ++i)
        CHECK(p[i] == Approx(cases[c].after[step][i]).margin(1e-6));
    }
    CHECK(sgd.steps() == 4);
  }
}

TEST_CASE("Sgd rejects invalid options with a UsageError", "[sgd]") {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<SgdOptions> bad{
      {.lr = 0.0f},
      {.lr = -0.1f},
      {.lr = inf},
      {.lr = nan},
      {.lr = 0.1f, .momentum = 1.0f},
      {.lr = 0.1f, .momentum = -0.1f},
      {.lr = 0.1f, .momentum = nan},
      {.lr = 0.1f, .momentum = 0.5f, .dampening = 1.5f},
      {.lr = 0.1f, .weight_decay = -1e-4f},
      {.lr = 0.1f, .weight_decay = inf},
      {.lr = 0.1f, .nesterov = true},
      {.lr = 0.1f, .momentum = 0.9f, .dampening = 0.1f, .nesterov = true},
  };
  for (size_t i = 0; i < bad.size(); ++i) {
    INFO("bad option set " << i);
    CHECK_THROWS_AS(Sgd(bad[i], 3), UsageError);
  }
  CHECK_THROWS_WITH(Sgd({.lr = 0.1f, .nesterov = true}, 3),
                    Catch::Contains("--nesterov needs --momentum > 0"));
  CHECK_NOTHROW(Sgd({.lr = 1e-6f, .momentum = 0.99f, .dampening = 1.0f, .weight_decay = 0.5f}, 3));
  CHECK_NOTHROW(Sgd({.lr = 0.1f, .momentum = 0.9f, .nesterov = true}, 0));
}

TEST_CASE("Sgd::step checks the sizes", "[sgd]") {
  Sgd sgd({}, 3);
  std::vector<float> p(3), g(2);
  CHECK_THROWS_AS(sgd.step(p, g), std::invalid_argument);
  std::vector<float> empty;
  Sgd none({}, 0);
  none.step(empty, empty);
  CHECK(none.steps() == 1);
}

TEST_CASE("the momentum buffer starts as the first gradient and restores", "[sgd]") {
  const SgdOptions o{.lr = 0.05f, .momentum = 0.9f, .weight_decay = 0.01f, .nesterov = true};
  Sgd a(o, 5);
  CHECK_FALSE(a.has_momentum_buffer());
  CHECK(a.momentum_buffer().size() == 5);
  std::vector<float> pa = kStart;
  a.step(pa, kGrads[0]);
  REQUIRE(a.has_momentum_buffer());
  for (size_t i = 0; i < 5; ++i)  // torch: buf = clone(grad + weight_decay * p)
    CHECK(a.momentum_buffer()[i] == Approx(kGrads[0][i] + 0.01f * kStart[i]).margin(1e-7));
  a.step(pa, kGrads[1]);

  // A checkpoint: parameters and buffer into a fresh optimizer; both take the same steps.
  Sgd b(o, 5);
  std::vector<float> pb = pa;
  std::vector<float> saved(a.momentum_buffer().begin(), a.momentum_buffer().end());
  b.set_momentum_buffer(saved, "ckpt.npz");
  CHECK(b.has_momentum_buffer());
  a.step(pa, kGrads[2]);
  b.step(pb, kGrads[2]);
  CHECK(pa == pb);

  // Without the buffer the fresh optimizer would restart momentum: a different step.
  Sgd c(o, 5);
  std::vector<float> pc = pb;
  c.step(pc, kGrads[3]);
  b.step(pb, kGrads[3]);
  CHECK(pc != pb);

  // clear_momentum_buffer: the next step is a first step again.
  b.clear_momentum_buffer();
  CHECK_FALSE(b.has_momentum_buffer());
  std::vector<float> pd = pb;
  Sgd d(o, 5);
  b.step(pb, kGrads[0]);
  d.step(pd, kGrads[0]);
  CHECK(pb == pd);
}

TEST_CASE("set_momentum_buffer refuses a wrong size or a run without momentum", "[sgd]") {
  Sgd with({.lr = 0.1f, .momentum = 0.5f}, 4);
  std::vector<float> three(3, 1.0f);
  CHECK_THROWS_WITH(
      with.set_momentum_buffer(three, "ckpt.npz"),
      Catch::Contains("ckpt.npz: momentum buffer has 3 values") && Catch::Contains("4 parameters"));
  CHECK_FALSE(with.has_momentum_buffer());
  Sgd without({.lr = 0.1f}, 4);
  CHECK(without.momentum_buffer().empty());
  std::vector<float> four(4, 1.0f);
  CHECK_THROWS_AS(without.set_momentum_buffer(four, "ckpt.npz"), DataError);
}
