// The trainer against an oracle: one process, one rank, the whole global batch, no
// Communicator at all. Every node count must reproduce the oracle's parameters to float
// rounding (data-parallel SGD with slice-weighted averaging is the same update).
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "core/data/sampler.h"
#include "core/errors.h"
#include "core/nn/loss.h"
#include "core/train/trainer.h"
#include "sim/cluster.h"
#include "param_diff.h"

using namespace dsgd;

namespace {

// Plain single-process SGD over the same global batches: the oracle.
std::vector<NamedTensor> oracle(const Dataset& data, const TrainConfig& config) {
  const int64_t o = model_outputs(config.model, data);
  Model model = Model::from_spec(config.model, data.features, o);
  model.init(config.seed);
  Sgd sgd(config.sgd, model.num_params());
  DataParallelSampler sampler(data.train.size(), config.global_batch, config.shuffle, config.seed);
  for (int64_t step = 0; step < config.steps; ++step) {
    auto batch = sampler.batch(step);
    const int64_t b = static_cast<int64_t>(batch.indices.size());
    std::vector<float> x(b * data.features), dout(b * o);
    std::vector<int32_t> labels(b);
    gather_rows(data.train, batch.indices, x, labels);
    model.zero_grad();
    auto out = model.forward(x.data(), b);
    softmax_cross_entropy(out.data(), labels.data(), b, o, 1.0f / b, dout.data());
    model.backward(x.data(), dout.data(), b);
    sgd.step(model.values(), model.grads());
  }
  return model.state();
}

std::vector<NamedTensor> train_on(int nodes, const Dataset& data, const TrainConfig& config,
                                  Algorithm algorithm) {
  TrainConfig c = config;
  c.allreduce = algorithm;
  std::vector<NamedTensor> params;
  sim::run_cluster({.nodes = nodes}, [&](Communicator& comm) {
    TrainResult r = train(comm, data, c);
    if (comm.rank() == 0) params = r.params;
  });
  return params;
}

}  // namespace

TEST_CASE("N simulated nodes match the single-rank oracle to 1e-5", "[trainer][oracle]") {
  const Dataset data = load_dataset("synthetic:train=1000,test=100");
  TrainConfig config;
  config.model = ModelSpec::parse("mlp:32,16");
  config.steps = 50;
  config.epochs = 0;
  config.shuffle = false;
  config.seed = 7;
  config.sgd = {.lr = 0.05f, .momentum = 0.9f, .weight_decay = 1e-4f};
  // 100 is not divisible by 3 or 8; 1000 samples / 100 = 10 batches per epoch (5 epochs).
  for (int64_t batch : {100, 64}) {
    config.global_batch = batch;
    const auto reference = oracle(data, config);
    for (int nodes : {1, 2, 3, 4, 8}) {
      for (Algorithm algo : {Algorithm::ring, Algorithm::naive}) {
        const auto got = train_on(nodes, data, config, algo);
        INFO("nodes " << nodes << " batch " << batch << " " << to_string(algo));
        CHECK(max_rel_diff(got, reference) < 1e-5);
      }
    }
  }
}

TEST_CASE("cnn:lenet on N simulated nodes matches the single-rank oracle",
          "[trainer][oracle][cnn]") {
  // 144 features read as 12x12 images: the smallest LeNet takes.
  const Dataset data = load_dataset("synthetic:train=240,test=40,features=144");
  TrainConfig config;
  config.model = ModelSpec::parse("cnn:lenet");
  config.steps = 6;
  config.epochs = 0;
  config.global_batch = 40;
  config.seed = 3;
  config.sgd = {.lr = 0.05f, .momentum = 0.9f};
  const auto reference = oracle(data, config);
  for (int nodes : {1, 3}) {
    INFO("nodes " << nodes);
    CHECK(max_rel_diff(train_on(nodes, data, config, Algorithm::ring), reference) < 1e-5);
  }
}

TEST_CASE("cnn:lenet trains in buckets, compressed and with local SGD", "[trainer][cnn]") {
  const Dataset data = load_dataset("synthetic:train=240,test=40,features=144");
  TrainConfig base;
  base.model = ModelSpec::parse("cnn:lenet");
  base.steps = 8;
  base.epochs = 0;
  base.global_batch = 40;
  base.sgd = {.lr = 0.05f, .momentum = 0.9f};
  TrainConfig buckets = base, powersgd = base, local = base;
  buckets.bucket_bytes = buckets.first_bucket_bytes = 1024;  // a bucket per tensor
  powersgd.compress = CompressSpec::parse("powersgd:2");
  powersgd.powersgd_start = 2;
  local.local_period = 3;
  const auto reference = train_on(3, data, base, Algorithm::ring);
  // Buckets sum each gradient as one all_reduce does; naive sums every float in the same
  // order wherever it sits, so its parameters are the same bits.
  CHECK(max_rel_diff(train_on(3, data, buckets, Algorithm::naive),
                     train_on(3, data, base, Algorithm::naive)) == 0.0);
  // PowerSGD compresses each weight, a convolution's as its (O, C K K) matrix.
  TrainResult compressed;
  sim::run_cluster({.nodes = 3}, [&](Communicator& comm) {
    TrainResult r = train(comm, data, powersgd);
    if (comm.rank() == 0) compressed = r;
  });
  CHECK(compressed.compression.ratio() > 1.5);
  CHECK(max_rel_diff(compressed.params, reference) > 0.0);
  CHECK(std::isfinite(compressed.final_loss));
  const auto averaged = train_on(3, data, local, Algorithm::ring);
  CHECK(max_rel_diff(averaged, reference) > 0.0);
  CHECK(max_rel_diff(averaged, reference) < 0.5);
}

TEST_CASE("every rank ends with identical parameters", "[trainer]") {
  const Dataset data = load_dataset("synthetic:train=512,test=64");
  TrainConfig config;
  config.steps = 20;
  config.epochs = 0;
  config.global_batch = 50;
  std::vector<std::vector<NamedTensor>> params(3);
  sim::run_cluster({.nodes = 3}, [&](Communicator& comm) {
    params[comm.rank()] = train(comm, data, config).params;
  });
  for (int r = 1; r < 3; ++r)
    for (size_t t = 0; t < params[0].size(); ++t)
      CHECK(params[r][t].tensor.span().size() == params[0][t].tensor.span().size());
  for (int r = 1; r < 3; ++r)
    CHECK(max_rel_diff(params[r], params[0]) == 0.0);
}

TEST_CASE("a batch larger than the data or a regression mismatch is refused", "[trainer]") {
  const Dataset data = load_dataset("synthetic:train=100,test=10");
  TrainConfig config;
  config.global_batch = 101;
  CHECK_THROWS_WITH(validate(config, data), Catch::Contains("larger than the 100 training"));
  config.global_batch = 10;
  config.steps = -1;
  CHECK_THROWS_AS(validate(config, data), UsageError);
}

TEST_CASE("training reduces the loss and reports metrics every step", "[trainer]") {
  const Dataset data = load_dataset("synthetic:train=2048,test=512");
  TrainConfig config;
  config.epochs = 3;
  std::vector<StepMetrics> seen;
  sim::run_cluster({.nodes = 2}, [&](Communicator& comm) {
    TrainHooks hooks;
    if (comm.rank() == 0) hooks.on_step = [&](const StepMetrics& m) { seen.push_back(m); };
    train(comm, data, config, nullptr, hooks);
  });
  REQUIRE(seen.size() == 24);  // 2048 / 256 = 8 steps per epoch
  CHECK(seen.back().loss < seen.front().loss * 0.5);
  CHECK(seen.back().test_accuracy.value_or(0) > 0.5);  // 10 classes: chance is 0.1
  int evaluated = 0;
  for (const auto& m : seen)
    evaluated += m.test_accuracy.has_value();
  CHECK(evaluated == 3);  // end of each epoch
  CHECK(seen[3].bytes_sent > 0);
  CHECK(seen[3].comm_s > 0);
}

TEST_CASE("communication time follows the link model: latency adds, bandwidth divides",
          "[trainer][link]") {
  // 4 nodes, ring all_reduce: each step makes 2(R-1) = 6 sequential hops of P/R floats.
  // Model per step: compute + 6 * (latency + (4P/R) / bandwidth). The model clock must add
  // exactly that per step; wall time is only bounded from below (a message is never seen
  // before the link model allows). bench/bench_fidelity measures how close wall time gets.
  const Dataset data = load_dataset("synthetic:train=1024,test=64");
  TrainConfig config;
  config.model = ModelSpec::parse("mlp:64");
  config.steps = 8;
  config.epochs = 0;
  config.allreduce = Algorithm::ring;
  config.eval_every = 1000;                               // evaluate only after the last step
  const double params = 32 * 64 + 64 + 64 * 10 + 10 + 2;  // + loss and accuracy slots
  const double hop_bytes = 4 * params / 4;
  struct Case {
    double latency_s, bandwidth_Bps;
  };
  const std::vector<Case> cases = {{0.002, 0}, {0.008, 0}, {0.0, 0.5e6}, {0.0, 2e6}};
  std::vector<double> model_period;
  for (Case c : cases) {
    sim::ClusterOptions options{.nodes = 4};
    options.network.link = {.latency_s = c.latency_s, .bandwidth_Bps = c.bandwidth_Bps};
    double first_wall_s = 0, last_wall_s = 0, first_model_s = 0, last_model_s = 0;
    sim::run_cluster(options, [&](Communicator& comm) {
      TrainHooks hooks;
      if (comm.rank() == 0)
        hooks.on_step = [&](const StepMetrics& m) {
          if (m.test_loss) return;  // the last step also evaluates
          (m.step == 1 ? first_wall_s : last_wall_s) = m.wall_s;
          (m.step == 1 ? first_model_s : last_model_s) = m.model_s;
        };
      train(comm, data, config, nullptr, hooks);
    });
    const double period = (last_wall_s - first_wall_s) / (config.steps - 2);
    const double model = (last_model_s - first_model_s) / (config.steps - 2);
    const double predicted =
        6 * (c.latency_s + (c.bandwidth_Bps > 0 ? hop_bytes / c.bandwidth_Bps : 0));
    INFO("latency " << c.latency_s << " bandwidth " << c.bandwidth_Bps << ": wall period " << period
                    << " s, model period " << model << " s, link model " << predicted << " s");
    CHECK(first_model_s > 0);
    CHECK(model >= predicted);  // compute adds to the communication
    // Each of the 6 hops may be stamped up to 0.5 ms early (the thread woke late).
    CHECK(period >= predicted - 6 * 0.0005);
    model_period.push_back(model);
  }
  // Compute is the same in every case, so the differences are the link model's alone.
  CHECK(model_period[1] - model_period[0] == Approx(6 * 0.006).epsilon(1e-4));
  CHECK(model_period[2] - model_period[3] ==
        Approx(6 * hop_bytes * (1 / 0.5e6 - 1 / 2e6)).epsilon(1e-4));
}
