// DDP's gradient buckets: the assignment PyTorch makes (fixtures written by torch, so these
// tests need none), the same parameters as one all_reduce, the overlap with backward in model
// time, and a peer lost while a bucket is in flight.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/errors.h"
#include "core/train/buckets.h"
#include "core/train/trainer.h"
#include "sim/cluster.h"
#include "param_diff.h"

using namespace dsgd;

namespace {

TrainConfig bucket_config(const char* model, int64_t steps) {
  TrainConfig config;
  config.model = ModelSpec::parse(model);
  config.steps = steps;
  config.epochs = 0;
  config.global_batch = 60;
  config.eval_every = 1000;  // only after the last step
  return config;
}

struct BucketRun {
  std::vector<NamedTensor> params;
  std::string buckets;
  std::vector<StepMetrics> steps;  // rank 0's
};

BucketRun train_buckets(const sim::ClusterOptions& options, const Dataset& data,
                        const TrainConfig& config) {
  BucketRun out;
  sim::run_cluster(options, [&](Communicator& comm) {
    TrainHooks hooks;
    if (comm.rank() == 0) hooks.on_step = [&](const StepMetrics& m) { out.steps.push_back(m); };
    TrainResult r = train(comm, data, config, nullptr, hooks);
    if (comm.rank() == 0) out.params = r.params, out.buckets = r.buckets;
  });
  return out;
}

}  // namespace

TEST_CASE("buckets are the ones PyTorch's DDP makes", "[buckets]") {
  std::ifstream in(std::string(DSGD_SOURCE_DIR) + "/tests/data/torch/ddp_buckets.json");
  REQUIRE(in);
  const nlohmann::json fixture = nlohmann::json::parse(in);
  REQUIRE(fixture["cases"].size() >= 5);
  for (const auto& c : fixture["cases"]) {
    const Model model(c["sizes"].get<std::vector<int64_t>>(), 2);
    const std::vector<GradientBucket> buckets =
        assign_buckets(model, bucket_cap_bytes(c["first_bucket_mb"].get<double>()),
                       bucket_cap_bytes(c["bucket_cap_mb"].get<double>()), 2);
    std::vector<std::vector<int>> got;
    for (const GradientBucket& b : buckets)
      got.push_back(b.params);
    INFO(c.dump());
    CHECK(got == c["buckets"].get<std::vector<std::vector<int>>>());
    // Each bucket is one range of the gradient buffer; together they cover it, extras included.
    int64_t end = model.num_params() + 2;
    for (const GradientBucket& b : buckets) {
      CHECK(b.end == end);
      CHECK(b.begin == model.params()[b.params.back()].offset);
      CHECK(b.lowest_layer == b.params.back() / 2);
      end = b.begin;
    }
    CHECK(end == 0);
  }
}

TEST_CASE("buckets give one all_reduce's parameters: bit for bit where the sum order stays",
          "[trainer][buckets][sim]") {
  // Every tensor its own bucket (caps of 1 byte). naive and tree sum each float in an order
  // that does not depend on where it sits in the buffer, so the result is the same bits;
  // ring and halving-doubling split the buffer into chunks, whose order of summation
  // follows the chunk, so each float may round differently.
  const Dataset data = load_dataset("synthetic:train=300,test=30");
  TrainConfig config = bucket_config("mlp:32,16", 12);
  for (Algorithm algorithm :
       {Algorithm::naive, Algorithm::tree, Algorithm::ring, Algorithm::halving_doubling}) {
    config.allreduce = algorithm;
    config.bucket_bytes = 0;
    const BucketRun one = train_buckets({.nodes = 3}, data, config);
    config.bucket_bytes = config.first_bucket_bytes = 1;
    const BucketRun bucketed = train_buckets({.nodes = 3}, data, config);
    INFO(to_string(algorithm) << ", " << bucketed.buckets);
    CHECK(bucketed.buckets.starts_with("6 buckets"));
    const double diff = max_rel_diff(bucketed.params, one.params);
    if (algorithm == Algorithm::naive || algorithm == Algorithm::tree)
      CHECK(diff == 0.0);
    else
      CHECK(diff < 1e-6);
    CHECK(bucketed.steps.back().loss == Approx(one.steps.back().loss).epsilon(1e-5));
  }
}

TEST_CASE("a bucket's all_reduce runs while backward computes the layers below it",
          "[trainer][buckets][sim]") {
  // mlp:256,256 on 256 features: the middle layer's 256 x 256 gradient is ready before the
  // first layer's backward (33.5 MFLOP per rank, 168 ms at 0.2 GFLOP/s) and all-reduces,
  // over 2 MB/s links, in about 131 ms: with buckets that time hides behind the compute.
  const Dataset data = load_dataset("synthetic:train=512,test=64,features=256");
  TrainConfig config = bucket_config("mlp:256,256", 5);
  config.global_batch = 256;
  config.allreduce = Algorithm::ring;
  sim::ClusterOptions options{.nodes = 2};
  options.node.gflops = 0.2;
  options.network.link.bandwidth_Bps = 2e6;
  const auto period = [](const BucketRun& t) {  // model seconds per step, steps 2 to 4
    return (t.steps[3].model_s - t.steps[0].model_s) / 3;
  };
  const BucketRun one = train_buckets(options, data, config);
  config.bucket_bytes = config.first_bucket_bytes = 64 * 1024;
  const BucketRun bucketed = train_buckets(options, data, config);
  REQUIRE(bucketed.buckets.starts_with("2 buckets"));
  const double rows = 128, macs = 256.0 * 256 + 256.0 * 256 + 256.0 * 10;
  const double compute_s = 6 * macs * rows / 0.2e9;  // forward and backward, per step
  const double hidden_s = 4 * 256.0 * 256 / 2e6;     // the middle layer over one ring hop pair
  INFO("per step: one all_reduce " << period(one) << " s, buckets " << period(bucketed)
                                   << " s, compute " << compute_s << " s");
  CHECK(period(bucketed) >= compute_s);  // compute is never hidden
  CHECK(period(bucketed) < period(one) - 0.9 * hidden_s);
  CHECK(max_rel_diff(bucketed.params, one.params) < 1e-6);
}

TEST_CASE("a peer lost while a bucket is in flight fails the run, naming it",
          "[trainer][buckets][sim]") {
  const Dataset data = load_dataset("synthetic:train=300,test=30");
  TrainConfig config = bucket_config("mlp:32,16", 6);
  config.bucket_bytes = config.first_bucket_bytes = 1;
  sim::ClusterOptions options{.nodes = 3, .timeout = std::chrono::seconds(60)};
  options.node_overrides[1] = options.node;
  options.node_overrides[1].crash_at_step = 3;
  std::vector<std::string> errors(3);
  CHECK_THROWS_AS(sim::run_cluster(options,
                                   [&](Communicator& comm) {
                                     try {
                                       train(comm, data, config);
                                     } catch (const CommError& e) {
                                       errors[comm.rank()] = e.what();
                                       throw;
                                     }
                                   }),
                  CommError);
  CHECK(errors[1].empty());  // it crashed: no error of its own
  for (int r : {0, 2})
    CHECK_THAT(errors[r], Catch::Contains("rank 1") && !Catch::Contains("deadline"));
}
