// Post-local SGD (PyTorch's PostLocalSGDState with PeriodicModelAverager): where its maths is
// synchronous SGD's, the parameters are; between averages each rank keeps its own model, and
// a local step sends nothing.
#include <catch2/catch.hpp>
#include <vector>

#include "core/train/trainer.h"
#include "param_diff.h"
#include "sim/cluster.h"

using namespace dsgd;

namespace {

TrainConfig local_sgd_config() {
  TrainConfig config;
  config.model = ModelSpec::parse("mlp:32,16");
  config.steps = 14;
  config.epochs = 0;
  config.global_batch = 60;
  config.eval_every = 1000;  // only after the last step
  config.sgd = {.lr = 0.05f, .momentum = 0.9f};
  return config;
}

struct LocalRun {
  std::vector<std::vector<NamedTensor>> params;  // by rank
  std::vector<StepMetrics> steps;                // rank 0's
};

LocalRun train_local(int nodes, const Dataset& data, const TrainConfig& config) {
  LocalRun out;
  out.params.resize(nodes);
  sim::run_cluster({.nodes = nodes}, [&](Communicator& comm) {
    TrainHooks hooks;
    if (comm.rank() == 0) hooks.on_step = [&](const StepMetrics& m) { out.steps.push_back(m); };
    out.params[comm.rank()] = train(comm, data, config, nullptr, hooks).params;
  });
  return out;
}

}  // namespace

TEST_CASE("local SGD steps and averages at PyTorch's iterations", "[trainer][local_sgd]") {
  TrainConfig config = local_sgd_config();
  config.local_period = 4;
  config.local_start = 3;
  std::vector<int64_t> local, averaged;
  for (int64_t step = 0; step < 14; ++step) {
    if (local_step(config, step)) local.push_back(step);
    if (averages_after(config, step)) averaged.push_back(step);
  }
  CHECK(local == std::vector<int64_t>{3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13});
  // PeriodicModelAverager(period=4, warmup_steps=3): after iterations 3, 7, 11.
  CHECK(averaged == std::vector<int64_t>{3, 7, 11});
  config.local_period = 0;
  CHECK_FALSE(local_step(config, 10));
}

TEST_CASE("local SGD that averages after every step is synchronous SGD, to rounding",
          "[trainer][local_sgd][sim]") {
  // Each rank steps with its own mean gradient g_r, then the ranks average: p - lr mean(m_r)
  // with mean(m_r) following mean(g_r), which is synchronous SGD's update when the slices
  // are equal (60 rows on 3 ranks). Only the order of the sums differs.
  const Dataset data = load_dataset("synthetic:train=300,test=30");
  TrainConfig config = local_sgd_config();
  const LocalRun sync = train_local(3, data, config);
  config.local_period = 1;
  const LocalRun local = train_local(3, data, config);
  for (int r = 0; r < 3; ++r) {
    INFO("rank " << r);
    CHECK(max_rel_diff(local.params[r], sync.params[0]) < 1e-5);
    CHECK(max_rel_diff(local.params[r], local.params[0]) == 0.0);  // just averaged
  }
}

TEST_CASE("before local SGD starts, the run is synchronous SGD bit for bit",
          "[trainer][local_sgd][sim]") {
  const Dataset data = load_dataset("synthetic:train=300,test=30");
  TrainConfig config = local_sgd_config();
  const LocalRun sync = train_local(3, data, config);
  config.local_period = 2;
  config.local_start = 14;  // after the last step
  const LocalRun late = train_local(3, data, config);
  CHECK(max_rel_diff(late.params[0], sync.params[0]) == 0.0);
  CHECK(late.steps.back().loss == sync.steps.back().loss);
}

TEST_CASE("between averages each rank keeps its own model and sends nothing",
          "[trainer][local_sgd][sim]") {
  const Dataset data = load_dataset("synthetic:train=300,test=30");
  TrainConfig config = local_sgd_config();
  config.local_period = 5;
  config.local_start = 2;  // averages after steps 2, 7, 12 (from 0); 13 is local
  const LocalRun run = train_local(3, data, config);
  REQUIRE(run.steps.size() == 14);
  for (int64_t step = 0; step < 13; ++step) {  // the last step also evaluates
    INFO("step " << step);
    if (step < 2 || averages_after(config, step))
      CHECK(run.steps[step].bytes_sent > 0);
    else
      CHECK(run.steps[step].bytes_sent == 0);
  }
  CHECK(max_rel_diff(run.params[1], run.params[0]) > 0.0);  // step 13 did not average
  config.steps = 13;                                        // ends with the average of step 12
  const LocalRun averaged = train_local(3, data, config);
  CHECK(max_rel_diff(averaged.params[1], averaged.params[0]) == 0.0);
  CHECK(max_rel_diff(averaged.params[2], averaged.params[0]) == 0.0);
}
