// Elastic membership (sim/elastic.h) on simulated nodes: in-process after a crash equals a
// fresh run of the survivors from the state they had; restart equals the survivors resumed
// from the newest checkpoint; faults and links follow their nodes; the limits hold and
// their errors name the rank as it was numbered at the start.
#include <catch2/catch.hpp>

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/train/trainer.h"
#include "param_diff.h"
#include "sim/cluster.h"
#include "sim/elastic.h"

using namespace dsgd;

namespace {

TrainConfig elastic_config() {
  TrainConfig c;
  c.model = ModelSpec::parse("mlp:16");
  c.steps = 30;
  c.epochs = 0;
  c.global_batch = 48;
  c.seed = 3;
  c.sgd = {.lr = 0.1f, .momentum = 0.9f};
  return c;
}

sim::ClusterOptions crashing(int nodes, std::vector<std::pair<int, int64_t>> crashes) {
  sim::ClusterOptions o{.nodes = nodes};
  for (auto [rank, step] : crashes)
    o.node_overrides[rank].crash_at_step = step;
  return o;
}

// Rank 0's final parameters of a plain run, and its state after `keep_step` (when given).
struct Plain {
  std::vector<NamedTensor> params;
  std::optional<TrainState> kept;
};
Plain plain_run(int nodes, const Dataset& data, const TrainConfig& config, int64_t keep_step,
                const TrainState* resume = nullptr) {
  Plain out;
  sim::run_cluster({.nodes = nodes}, [&](Communicator& comm) {
    TrainHooks hooks;
    if (comm.rank() == 0 && keep_step > 0) {
      hooks.checkpoint_every = keep_step;
      hooks.on_checkpoint = [&](const TrainState& s) {
        if (s.step == keep_step) out.kept = s;
      };
    }
    TrainResult r = train(comm, data, config, nullptr, hooks, resume);
    if (comm.rank() == 0) out.params = r.params;
  });
  return out;
}

// An elastic run as dsgd train makes it; `checkpoint_every` > 0: rank 0 keeps its newest
// checkpoint in memory, which a restart goes on from.
struct Elastic {
  std::vector<sim::MembershipChange> changes;
  std::vector<NamedTensor> params;
  int world = 0;
};
Elastic elastic_run(const sim::ClusterOptions& options, sim::ElasticPolicy policy,
                    const Dataset& data, const TrainConfig& config, int64_t checkpoint_every = 0,
                    int max_restarts = 3) {
  Elastic out;
  std::mutex mutex;
  std::optional<TrainState> newest;
  const auto fn = [&](Communicator& comm, const sim::ElasticRound& round) {
    TrainHooks hooks;
    sim::add_round_hooks(hooks, comm, round);
    if (comm.rank() == 0 && checkpoint_every > 0) {
      hooks.checkpoint_every = checkpoint_every;
      hooks.on_checkpoint = [&](const TrainState& s) {
        std::lock_guard lock(mutex);
        newest = s;
      };
    }
    TrainResult r = train(comm, data, config, nullptr, hooks, round.resume);
    if (comm.rank() == 0) out.params = r.params, out.world = r.world;
  };
  out.changes = sim::run_elastic(options, {.policy = policy, .max_restarts = max_restarts}, fn,
                                 [&] { return newest; });
  return out;
}

}  // namespace

TEST_CASE("in-process elastic after a crash equals a fresh run of the survivors from their state",
          "[elastic]") {
  const Dataset data = load_dataset("synthetic:train=480,test=96");
  const TrainConfig config = elastic_config();
  const Elastic e =
      elastic_run(crashing(4, {{1, 20}}), sim::ElasticPolicy::in_process, data, config);
  REQUIRE(e.changes.size() == 1);
  CHECK(e.changes[0].lost == std::vector<int>{1});
  CHECK(e.changes[0].world == 3);
  CHECK(e.changes[0].reached_step == 19);  // rank 1 died as step 20 began
  // Rank 0's last commit: step 19, or 18 when rank 1's last messages died with it.
  const int64_t resumed = e.changes[0].resumed_step;
  CHECK((resumed == 19 || resumed == 18));
  CHECK(e.world == 3);
  const Plain before = plain_run(4, data, config, resumed);
  REQUIRE(before.kept);
  const Plain survivors = plain_run(3, data, config, 0, &*before.kept);
  CHECK(max_rel_diff(e.params, survivors.params) == 0.0);  // bit for bit
  // ... and not the run without the crash, whose last 11 steps summed over 4 ranks.
  CHECK(max_rel_diff(e.params, plain_run(4, data, config, 0).params) > 0.0);
}

TEST_CASE("in-process elastic goes on when rank 0 dies: the lowest survivor is the new rank 0",
          "[elastic]") {
  const Dataset data = load_dataset("synthetic:train=480,test=96");
  const TrainConfig config = elastic_config();
  const Elastic e =
      elastic_run(crashing(3, {{0, 10}}), sim::ElasticPolicy::in_process, data, config);
  REQUIRE(e.changes.size() == 1);
  CHECK(e.changes[0].lost == std::vector<int>{0});
  const int64_t resumed = e.changes[0].resumed_step;  // rank 1's last commit
  CHECK((resumed == 9 || resumed == 8));
  const Plain before = plain_run(3, data, config, resumed);
  REQUIRE(before.kept);
  CHECK(max_rel_diff(e.params, plain_run(2, data, config, 0, &*before.kept).params) == 0.0);
}

TEST_CASE("restart elastic goes on from the newest checkpoint and loses the steps since",
          "[elastic]") {
  const Dataset data = load_dataset("synthetic:train=480,test=96");
  const TrainConfig config = elastic_config();
  const Elastic e =
      elastic_run(crashing(4, {{1, 20}, {2, 27}}), sim::ElasticPolicy::restart, data, config, 8);
  REQUIRE(e.changes.size() == 2);
  CHECK(e.changes[0].lost == std::vector<int>{1});
  CHECK(e.changes[0].reached_step == 19);
  CHECK(e.changes[0].resumed_step == 16);           // checkpoints every 8 steps: 3 steps lost
  CHECK(e.changes[1].lost == std::vector<int>{2});  // rank 1 of the second round
  CHECK(e.changes[1].world == 2);
  CHECK(e.changes[1].reached_step == 26);
  CHECK(e.changes[1].resumed_step == 24);
  CHECK(e.world == 2);
  const Plain first = plain_run(4, data, config, 16);
  REQUIRE(first.kept);
  const Plain second = plain_run(3, data, config, 24, &*first.kept);
  REQUIRE(second.kept);
  CHECK(max_rel_diff(e.params, plain_run(2, data, config, 0, &*second.kept).params) == 0.0);
}

TEST_CASE("restart elastic without a checkpoint yet starts the survivors afresh", "[elastic]") {
  const Dataset data = load_dataset("synthetic:train=480,test=96");
  const TrainConfig config = elastic_config();
  const Elastic e =
      elastic_run(crashing(3, {{2, 5}}), sim::ElasticPolicy::restart, data, config, 8);
  REQUIRE(e.changes.size() == 1);
  CHECK(e.changes[0].resumed_step == 0);
  CHECK(max_rel_diff(e.params, plain_run(2, data, config, 0).params) == 0.0);
}

TEST_CASE("elastic runs stop at --max-restarts and when every node is lost, naming the rank",
          "[elastic]") {
  const Dataset data = load_dataset("synthetic:train=480,test=96");
  const TrainConfig config = elastic_config();
  try {
    elastic_run(crashing(4, {{1, 10}, {2, 20}}), sim::ElasticPolicy::in_process, data, config, 0,
                1);
    FAIL("a second change past --max-restarts 1 went on");
  } catch (const CommError& e) {
    const std::string what = e.what();
    CHECK(what.find("--max-restarts 1") != std::string::npos);
    CHECK(what.find("ranks 0, 1, 2 here were 0, 2, 3 at the start") != std::string::npos);
  }
  try {
    elastic_run(crashing(2, {{0, 5}, {1, 5}}), sim::ElasticPolicy::in_process, data, config);
    FAIL("a run with no node left went on");
  } catch (const CommError& e) {
    CHECK(std::string(e.what()).find("every node crashed") != std::string::npos);
  }
}

TEST_CASE("a run without a crash is one round, and its errors pass through", "[elastic]") {
  const Dataset data = load_dataset("synthetic:train=480,test=96");
  const TrainConfig config = elastic_config();
  const Elastic e = elastic_run({.nodes = 3}, sim::ElasticPolicy::in_process, data, config);
  CHECK(e.changes.empty());
  CHECK(max_rel_diff(e.params, plain_run(3, data, config, 0).params) == 0.0);
  TrainConfig diverging = config;
  diverging.sgd.lr = 1e30f;
  CHECK_THROWS_AS(
      elastic_run(crashing(3, {{1, 20}}), sim::ElasticPolicy::in_process, data, diverging), Error);
}

TEST_CASE("the survivors keep their own faults, links and outages, renumbered", "[elastic]") {
  sim::ClusterOptions first{.nodes = 4};
  first.node_overrides[1].crash_at_step = 3;
  first.node_overrides[3].straggler = 2.5;
  first.node_overrides[3].crash_at_s = 5.0;
  first.network.overrides.push_back({.from = 3, .to = 0, .latency_s = 0.01});
  first.network.overrides.push_back({.from = 1, .to = 2, .latency_s = 0.02});
  first.network.overrides.push_back({.from = -1, .to = 3, .bandwidth_Bps = 1e6});
  first.network.outages.push_back({.links = {{1, 2}, {3, 2}}, .from_s = 2.0, .until_s = 4.0});
  const sim::ClusterOptions c = sim::survivors_cluster(first, {0, 2, 3}, 1.5);
  CHECK(c.nodes == 3);
  REQUIRE(c.node_overrides.size() == 1);
  CHECK(c.node_overrides.at(2).straggler == 2.5);
  CHECK(c.node_overrides.at(2).crash_at_s == Approx(3.5));  // 1.5 s of the run have passed
  REQUIRE(c.network.overrides.size() == 2);
  CHECK(c.network.overrides[0].from == 2);
  CHECK(c.network.overrides[0].to == 0);
  CHECK(c.network.overrides[1].from == -1);
  CHECK(c.network.overrides[1].to == 2);
  REQUIRE(c.network.outages.size() == 1);
  CHECK(c.network.outages[0].links == std::vector<std::pair<int, int>>{{2, 1}});
  CHECK(c.network.outages[0].from_s == Approx(0.5));
  CHECK(c.network.outages[0].until_s == Approx(2.5));
}
