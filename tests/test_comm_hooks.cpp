// DDP communication hooks (--compress) and post-local SGD against PyTorch: the hooks_fixture
// comm_hooks.json holds what torch 1.13's DistributedDataParallel on 2 gloo processes made
// of the same model, data and batches (tests/data/torch/make_comm_hooks.py), so these tests
// need no torch. Beside it, what holds without a reference: the 16-bit wire's rounding, the
// hooks' invariants, and the bytes they save.
#include <catch2/catch.hpp>
#include <bit>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <vector>

#include "core/comm/collectives.h"
#include "core/errors.h"
#include "core/train/comm_hook.h"
#include "core/train/powersgd_hook.h"
#include "core/train/trainer.h"
#include "param_diff.h"
#include "sim/cluster.h"

using namespace dsgd;
using nlohmann::json;

namespace {

const json& hooks_fixture() {
  static const json j = [] {
    std::ifstream in(std::string(DSGD_SOURCE_DIR) + "/tests/data/torch/comm_hooks.json");
    REQUIRE(in);
    return json::parse(in);
  }();
  return j;
}

const json& fixture_case(const std::string& name) {
  for (const json& c : hooks_fixture()["cases"])
    if (c["name"] == name) return c;
  FAIL("no case " << name << " in comm_hooks.json");
  throw;
}

Dataset fixture_data() {
  const json& f = hooks_fixture();
  const std::vector<int64_t> sizes = f["sizes"];
  Dataset d{.name = "torch fixture", .features = sizes.front(), .classes = sizes.back()};
  const std::vector<float> x = f["x"];
  const std::vector<int64_t> y = f["y"];
  d.train.x = Tensor({int64_t(y.size()), d.features}, x);
  d.train.labels.assign(y.begin(), y.end());
  d.test = d.train;
  return d;
}

// The hooks_fixture's parameters in dsgd's order (layers.{i}.weight, layers.{i}.bias).
std::vector<NamedTensor> params_of(const json& named) {
  const std::vector<int64_t> sizes = hooks_fixture()["sizes"];
  std::vector<NamedTensor> out;
  for (size_t i = 0; i + 1 < sizes.size(); ++i) {
    const std::string layer = "layers." + std::to_string(i);
    out.push_back({layer + ".weight", Tensor({sizes[i + 1], sizes[i]},
                                             named[layer + ".weight"].get<std::vector<float>>())});
    out.push_back({layer + ".bias",
                   Tensor({sizes[i + 1]}, named[layer + ".bias"].get<std::vector<float>>())});
  }
  return out;
}

TrainConfig fixture_config(const json& c) {
  const json& f = hooks_fixture();
  TrainConfig config;
  const std::vector<int64_t> sizes = f["sizes"];
  config.model = ModelSpec::parse("mlp:" + std::to_string(sizes[1]));
  config.global_batch = f["batch"];
  config.steps = f["steps"];
  config.epochs = 0;
  config.shuffle = false;
  config.eval_every = 1000;
  config.sgd = {.lr = f["lr"].get<float>(), .momentum = f["momentum"].get<float>()};
  config.allreduce = Algorithm::naive;
  const json& o = c["options"];
  if (o.contains("hook")) {
    const std::string hook = o["hook"];
    config.compress = CompressSpec::parse(
        hook == "powersgd" ? "powersgd:" + std::to_string(o["rank"].get<int>()) : hook);
  }
  if (o.contains("start")) config.powersgd_start = o["start"];
  if (o.contains("local_period")) {
    config.local_period = o["local_period"];
    config.local_start = o["local_start"];
  }
  // torch.randn's first Q of each compressed tensor, which the hooks_fixture keys by its width.
  const json drawn = c["initial_q"];
  // On the nodes' threads: no Catch assertion here (Catch is not thread-safe), an exception
  // fails the run instead.
  config.powersgd_initial_q = [drawn](const HookBucket&, const HookTensor& t, std::span<float> q) {
    const std::vector<float> values = drawn.at(std::to_string(t.cols));
    if (values.size() != q.size())
      throw std::logic_error("the hooks_fixture's Q for width " + std::to_string(t.cols) + " has " +
                             std::to_string(values.size()) + " values, not " +
                             std::to_string(q.size()));
    std::copy(values.begin(), values.end(), q.begin());
  };
  return config;
}

// Each rank's final parameters after the hooks_fixture's run of `name` on 2 simulated nodes.
std::vector<std::vector<NamedTensor>> train_like_torch(const std::string& name,
                                                       TrainConfig* changed = nullptr) {
  const json& c = fixture_case(name);
  const Dataset data = fixture_data();
  const TrainConfig config = changed ? *changed : fixture_config(c);
  const std::vector<NamedTensor> init = params_of(c["init"]);
  std::vector<std::vector<NamedTensor>> out(2);
  sim::run_cluster({.nodes = 2}, [&](Communicator& comm) {
    out[comm.rank()] = train(comm, data, config, &init).params;
  });
  return out;
}

double worst_vs_torch(const std::string& name) {
  const std::vector<std::vector<NamedTensor>> ours = train_like_torch(name);
  double worst = 0;
  for (int r = 0; r < 2; ++r)
    worst = std::max(worst, max_rel_diff(ours[r], params_of(fixture_case(name)["final"][r])));
  return worst;
}

}  // namespace

TEST_CASE("the trainer matches PyTorch's DDP on the hooks' hooks_fixture without a hook",
          "[comm_hooks][torch]") {
  CHECK(worst_vs_torch("none") < 1e-6);
}

TEST_CASE("fp16 compression matches torch's fp16_compress_hook", "[comm_hooks][torch]") {
  // Not to 1e-6: a float32 gradient whose last bit differs from torch's (another BLAS sum
  // order) may round to the neighbouring float16, 2^-11 away, and the steps after carry it.
  // Still far closer than the float16 run is to the float32 one (2.2e-4 in torch itself).
  const double ours = worst_vs_torch("fp16");
  const double fp16_vs_fp32 = max_rel_diff(params_of(fixture_case("fp16")["final"][0]),
                                           params_of(fixture_case("none")["final"][0]));
  CHECK(ours < 2e-5);
  CHECK(ours < fp16_vs_fp32 / 10);
}

TEST_CASE("PowerSGD matches torch's powerSGD_hook, from the same first Q", "[comm_hooks][torch]") {
  CHECK(worst_vs_torch("powersgd:1") < 1e-5);
  CHECK(worst_vs_torch("powersgd:2") < 1e-5);
}

TEST_CASE("post-local SGD matches torch's PostLocalSGDState with PeriodicModelAverager",
          "[comm_hooks][local_sgd][torch]") {
  CHECK(worst_vs_torch("local_sgd") < 1e-6);
}

namespace {

TrainConfig hooked_config(const char* compress) {
  TrainConfig config;
  config.model = ModelSpec::parse("mlp:32,16");
  config.steps = 12;
  config.epochs = 0;
  config.global_batch = 64;
  config.eval_every = 1000;
  config.allreduce = Algorithm::naive;  // the same sum order whatever the buffer's size
  if (compress) config.compress = CompressSpec::parse(compress);
  return config;
}

struct HookedRun {
  std::vector<NamedTensor> params;
  CompressionStats stats;
  uint64_t bytes_sent = 0;  // rank 0's
};

HookedRun train_hooked(const TrainConfig& config, int nodes = 4) {
  const Dataset data = load_dataset("synthetic:train=512,test=128,features=24,classes=5");
  HookedRun out;
  sim::run_cluster({.nodes = nodes}, [&](Communicator& comm) {
    const TrainResult r = train(comm, data, config);
    if (comm.rank() == 0) out = {r.params, r.compression, r.bytes_sent};
  });
  return out;
}

// Each rank's gradients for a hook called directly: a fixed random bucket per rank (of full
// rank as a matrix: mt19937's raw output is the same on every platform).
std::vector<float> rank_values(int rank, int64_t size) {
  std::mt19937 gen(static_cast<uint32_t>(rank) + 1);
  std::vector<float> v(static_cast<size_t>(size));
  for (float& x : v)
    x = (float(gen() % 2001) - 1000.0f) * 1e-5f;
  return v;
}

}  // namespace

TEST_CASE("before start_powerSGD_iter PowerSGD is synchronous SGD, bit for bit", "[comm_hooks]") {
  TrainConfig powersgd = hooked_config("powersgd:2");
  powersgd.powersgd_start = 1000;
  const HookedRun ours = train_hooked(powersgd);
  CHECK(max_rel_diff(ours.params, train_hooked(hooked_config(nullptr)).params) == 0);
  CHECK(ours.stats.after == 0);  // never compressed
}

TEST_CASE("PowerSGD at a matrix's full rank returns the exact mean, step after step",
          "[comm_hooks]") {
  // An 8 x 6 weight and its bias: at rank 6 P spans M's columns, so P P^T M = M.
  const HookBucket bucket{
      .index = 0, .size = 8 * 6 + 8, .tensors = {{"w", 0, 8, 6}, {"b", 48, 8, 1}}};
  std::vector<std::vector<float>> got(3);
  sim::run_cluster({.nodes = 3}, [&](Communicator& comm) {
    PowerSgdHook hook({.rank = 6, .start_iter = 0, .min_compression_rate = 0});
    for (int step = 0; step < 3; ++step) {
      std::vector<float> v = rank_values(comm.rank() + step, bucket.size);
      hook.reduce(comm, bucket, v);
      hook.step_done();
      if (step == 2) got[comm.rank()] = v;
    }
  });
  std::vector<float> sum(static_cast<size_t>(bucket.size), 0.0f);
  for (int r = 0; r < 3; ++r)
    for (size_t i = 0; i < sum.size(); ++i)
      sum[i] += rank_values(r + 2, bucket.size)[i];
  for (int r = 0; r < 3; ++r) {
    CHECK(got[r] == got[0]);
    for (size_t i = 0; i < sum.size(); ++i)
      CHECK(got[r][i] == Approx(sum[i]).margin(1e-6));
  }
}

TEST_CASE("top-k of every value is the exact sum, and a small k sends a fraction of the bytes",
          "[comm_hooks]") {
  // Naive sums in rank order, as top-k adds up what it gathered: the same sum, bit for bit.
  const HookedRun exact = train_hooked(hooked_config(nullptr), 4);
  const HookedRun all = train_hooked(hooked_config("topk:1"), 4);
  CHECK(max_rel_diff(all.params, exact.params) == 0);
  const HookedRun sparse = train_hooked(hooked_config("topk:0.01"), 4);
  CHECK(sparse.stats.ratio() > 40);
  CHECK(sparse.bytes_sent < exact.bytes_sent / 10);
}

TEST_CASE("a top-k rank keeps what it did not send and sends it later (error feedback)",
          "[comm_hooks]") {
  // One value per rank and step, k = 1 of 4: whatever is not sent now is owed, so over four
  // steps of the same gradients every value is sent once, in full.
  const HookBucket bucket{.index = 0, .size = 4, .tensors = {{"b", 0, 4, 1}}};
  std::vector<float> total(4, 0.0f);
  sim::run_cluster({.nodes = 2}, [&](Communicator& comm) {
    const std::unique_ptr<CommHook> hook = make_topk_hook(0.25, Algorithm::automatic);
    std::vector<float> sent(4, 0.0f);
    for (int step = 0; step < 4; ++step) {
      std::vector<float> v = step == 0 ? std::vector<float>{1, -4, 2, 3} : std::vector<float>(4);
      hook->reduce(comm, bucket, v);
      for (size_t i = 0; i < 4; ++i)
        sent[i] += v[i];
    }
    if (comm.rank() == 0) total = sent;
  });
  CHECK(total == std::vector<float>{2, -8, 4, 6});  // both ranks' values, each sent once
}

TEST_CASE("fp16 and bf16 send half the gradient bytes of float32", "[comm_hooks]") {
  const HookedRun exact = train_hooked(hooked_config(nullptr));
  for (const char* hook : {"fp16", "bf16"}) {
    CAPTURE(hook);
    const HookedRun half = train_hooked(hooked_config(hook));
    CHECK(half.stats.ratio() == 2);
    // Rank 0's bytes: the gradients' all_reduce halves; the broadcast of the parameters and
    // the evaluation's two floats stay float32.
    CHECK(half.bytes_sent < exact.bytes_sent * 0.6);
    CHECK(max_rel_diff(half.params, exact.params) < 1e-2);
  }
}

TEST_CASE("with buckets each bucket goes through the hook, on the communication thread",
          "[comm_hooks][buckets]") {
  TrainConfig plain = hooked_config("fp16");
  TrainConfig bucketed = plain;
  bucketed.bucket_bytes = 1024;  // several buckets
  bucketed.first_bucket_bytes = 1024;
  // fp16 is elementwise: how the values are cut into buckets changes nothing.
  CHECK(max_rel_diff(train_hooked(bucketed).params, train_hooked(plain).params) == 0);
  TrainConfig powersgd = hooked_config("powersgd:1");
  powersgd.powersgd_start = 2;
  powersgd.bucket_bytes = 1024;
  powersgd.first_bucket_bytes = 1024;
  const HookedRun run = train_hooked(powersgd);
  CHECK(run.stats.ratio() > 1.5);
}

TEST_CASE("the hooks read and write as --compress takes them", "[comm_hooks]") {
  for (const char* text : {"none", "fp16", "bf16", "powersgd:1", "powersgd:4", "topk:0.01"})
    CHECK(CompressSpec::parse(text).str() == text);
  CHECK(CompressSpec::parse("powersgd").rank == 1);
  for (const char* bad :
       {"fp32", "topk", "topk:0", "topk:1.5", "powersgd:0", "powersgd:x", "fp16:2"})
    CHECK_THROWS_AS(CompressSpec::parse(bad), UsageError);
}
