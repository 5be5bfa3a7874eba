// Asynchronous SGD with parameter servers (core/train/parameter_server.h) on simulated
// nodes: max-staleness 0 with momentum 0 is synchronous SGD on the workers; every rank ends
// with the servers' parameters; the bound holds; a straggler slows only itself when the
// staleness is unbounded, and everyone when it is 0.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <cmath>
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/io/metrics.h"
#include "core/train/parameter_server.h"
#include "core/train/trainer.h"
#include "param_diff.h"
#include "sim/cluster.h"

using namespace dsgd;

namespace {

TrainConfig ps_config() {
  TrainConfig c;
  c.model = ModelSpec::parse("mlp:16");
  c.steps = 12;
  c.epochs = 0;
  c.global_batch = 48;
  c.shuffle = false;
  c.seed = 5;
  c.sgd = {.lr = 0.1f, .momentum = 0.0f};
  return c;
}

// Every rank's result.
std::vector<TrainResult> run_ps(sim::ClusterOptions options, const Dataset& data,
                                const TrainConfig& config, const TrainHooks& hooks = {}) {
  std::vector<TrainResult> results(size_t(options.nodes));
  sim::run_cluster(options, [&](Communicator& comm) {
    results[size_t(comm.rank())] = train(comm, data, config, nullptr, hooks);
  });
  return results;
}

}  // namespace

TEST_CASE("parameter servers with max-staleness 0 and no momentum are synchronous SGD",
          "[parameter_server]") {
  const Dataset data = load_dataset("synthetic:train=480,test=96");
  const TrainConfig sync = ps_config();
  const auto reference = run_ps({.nodes = 3}, data, sync)[0].params;
  for (int servers : {1, 2}) {
    INFO(servers << " server(s)");
    TrainConfig ps = sync;
    ps.parameter_servers = servers;
    ps.max_staleness = 0;
    const auto results = run_ps({.nodes = 3 + servers}, data, ps);
    CHECK(max_rel_diff(results[0].params, reference) < 1e-5);
    for (const TrainResult& r : results)
      CHECK(max_rel_diff(r.params, results[0].params) == 0.0);  // the servers' broadcast
    // Each server applied every worker's every step; within a step the pushes land one
    // after another, so staleness runs from 0 to W - 1.
    CHECK(results[0].staleness.updates == int64_t(servers) * 3 * sync.steps);
    CHECK(results[0].staleness.max <= 2);
    CHECK(results[0].test_accuracy.has_value());
  }
}

TEST_CASE("one worker and its server are plain SGD, momentum and all", "[parameter_server]") {
  const Dataset data = load_dataset("synthetic:train=480,test=96");
  TrainConfig sync = ps_config();
  sync.sgd.momentum = 0.9f;
  sync.sgd.weight_decay = 1e-3f;
  TrainConfig ps = sync;
  ps.parameter_servers = 1;
  CHECK(max_rel_diff(run_ps({.nodes = 2}, data, ps)[0].params,
                     run_ps({.nodes = 1}, data, sync)[0].params) == 0.0);
}

TEST_CASE("a straggler holds the others back only as far as the bound says", "[parameter_server]") {
  // Rank 2 computes 20 times slower (wall and model time). What is checked is progress: the
  // straggler's step when worker 0 reports its step 23 of 24. Compute must dominate a step's
  // wall time for "20 times slower" to show (also under a sanitizer, which slows the
  // messages but not OpenBLAS), hence the wide model.
  const Dataset data = load_dataset("synthetic:train=480,test=96,features=128");
  sim::ClusterOptions options{.nodes = 4};
  options.node_overrides[2] = options.node;
  options.node_overrides[2].straggler = 20.0;
  const auto run_with = [&](int64_t staleness) {
    TrainConfig c = ps_config();
    c.model = ModelSpec::parse("mlp:1024,1024");
    c.steps = 24;
    c.parameter_servers = 1;
    c.max_staleness = staleness;
    std::atomic<int64_t> straggler_step{0}, straggler_at_end{-1};
    StalenessStats stats;
    sim::run_cluster(options, [&](Communicator& comm) {
      TrainHooks hooks;
      hooks.on_step = [&](const StepMetrics& m) {
        if (comm.rank() == 2) straggler_step = m.step;
        // (A worker reports its last step after the final evaluation, with everyone.)
        if (comm.rank() == 0 && m.step == c.steps - 1) straggler_at_end = straggler_step.load();
      };
      const TrainResult r = train(comm, data, c, nullptr, hooks);
      if (comm.rank() == 0) stats = r.staleness;
    });
    return std::pair{straggler_at_end.load(), stats};
  };
  // Lock step: worker 0's last step needs every push of the one before.
  const auto [locked_at, locked] = run_with(0);
  CHECK(locked_at >= 22);
  CHECK(locked.max <= 2);
  // Bound T: between a worker's pull of step c (every push below c - T in) and its push,
  // the others can push steps c - T to c + T: at most (2T + 1) (W - 1) updates.
  const auto [bounded_at, bounded] = run_with(1);
  CHECK(bounded_at >= 21);
  CHECK(bounded.max <= (2 * 1 + 1) * 2);
  // No bound: the fast workers finish while the straggler is a few steps in.
  const auto [free_at, free] = run_with(-1);
  CHECK(free_at < 18);
  CHECK(free.max > 2);  // the fast workers' pushes pass the straggler's
}

TEST_CASE("a worker's metrics carry the staleness of its last push", "[parameter_server]") {
  const Dataset data = load_dataset("synthetic:train=480,test=96");
  TrainConfig c = ps_config();
  c.parameter_servers = 1;
  std::vector<std::string> lines;
  TrainHooks hooks;
  std::mutex mutex;
  hooks.on_step = [&](const StepMetrics& m) {
    std::lock_guard lock(mutex);
    if (m.step == 2 || m.step == c.steps) lines.push_back(to_json_line(m));
  };
  run_ps({.nodes = 3}, data, c, hooks);
  REQUIRE(lines.size() == 4);  // two workers, two steps each
  for (const std::string& line : lines)
    CHECK_THAT(line, Catch::Contains("\"staleness\":"));
}

TEST_CASE("a crashed server or worker stops the run, naming it", "[parameter_server]") {
  const Dataset data = load_dataset("synthetic:train=480,test=96");
  TrainConfig c = ps_config();
  c.parameter_servers = 1;
  for (int rank : {1, 3}) {  // a worker, the server (its step: the slowest worker's)
    INFO("rank " << rank << " crashes");
    sim::ClusterOptions options{.nodes = 4};
    options.node_overrides[rank] = options.node;
    options.node_overrides[rank].crash_at_step = 5;
    CHECK_THROWS_WITH(run_ps(options, data, c), Catch::Contains(fmt::format("rank {}", rank)));
  }
}

TEST_CASE("parameter servers need a worker", "[parameter_server]") {
  CHECK_THROWS_WITH(server_layout(3, 3), Catch::Contains("leaves no worker"));
  CHECK_THROWS_AS(server_layout(3, 0), UsageError);
  const ServerLayout layout = server_layout(5, 2);
  CHECK(layout.workers == 3);
  CHECK(layout.shard(0, 11) == std::pair<int64_t, int64_t>{0, 6});
  CHECK(layout.shard(1, 11) == std::pair<int64_t, int64_t>{6, 11});
}
