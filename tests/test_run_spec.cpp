// The run description: flags over a scenario over a command's defaults, its checks, and
// its JSON form (what a trace records).
#include <catch2/catch.hpp>
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "core/errors.h"
#include "sim/run_flags.h"
#include "sim/run_spec.h"

using namespace dsgd;
using namespace dsgd::sim;

namespace {

constexpr unsigned kAll =
    kBackendFlag | kTrainingFlags | kClusterFlags | kOutputFlags | kCheckpointFlags;

// The spec `args` describe, as `dsgd train` (or a command with `defaults`) builds it.
RunSpec spec_of(std::vector<std::string> args, const RunSpec& defaults = {}) {
  CLI::App app;
  RunFlags flags;
  add_run_flags(app, flags, kAll, defaults);
  std::reverse(args.begin(), args.end());
  app.parse(args);
  return build_run_spec(flags, defaults);
}

std::string scenario(const char* name) {
  return std::string(DSGD_SOURCE_DIR) + "/assets/scenarios/" + name;
}

}  // namespace

TEST_CASE("a run description starts from the command's defaults") {
  const RunSpec plain = spec_of({});
  CHECK(plain.cluster.nodes == 4);
  CHECK(plain.model == "mlp:64");
  CHECK(plain.epochs == 5);
  CHECK(plain.steps == 0);
  CHECK(plain.cluster.timeout == std::chrono::seconds(30));
  CHECK(plain.cluster.network.ideal());

  RunSpec gui;
  gui.steps = 300;
  gui.epochs = 0;
  gui.cluster.network.link.latency_s = 2e-3;
  const RunSpec g = spec_of({"--bandwidth", "100Mbit"}, gui);
  CHECK(g.steps == 300);
  CHECK(g.cluster.network.link.latency_s == Approx(2e-3));  // the command's own default
  CHECK(g.cluster.network.link.bandwidth_Bps == Approx(12.5e6));
  CHECK(spec_of({"--epochs", "2"}, gui).steps == 0);  // --epochs replaces a default length
}

TEST_CASE("flags override the scenario, which overrides the defaults") {
  const RunSpec s = spec_of({"--scenario", scenario("straggler.toml")});
  CHECK(s.cluster.network.link.latency_s == Approx(1e-3));
  REQUIRE(s.cluster.node_overrides.count(2));
  CHECK(s.cluster.node_overrides.at(2).straggler == 3.0);
  CHECK(s.scenario == scenario("straggler.toml"));

  const RunSpec o =
      spec_of({"--scenario", scenario("straggler.toml"), "--latency", "5ms", "--crash", "1@1.5s"});
  CHECK(o.cluster.network.link.latency_s == Approx(5e-3));
  CHECK(o.cluster.node_overrides.at(2).straggler == 3.0);
  CHECK(o.cluster.node_overrides.at(1).crash_at_s == Approx(1.5));
  CHECK_FALSE(o.cluster.node_overrides.at(1).crash_at_step);
}

TEST_CASE("a run description refuses what cannot run, naming the flag") {
  CHECK_THROWS_WITH(spec_of({"--nodes", "300"}), Catch::Contains("--nodes 300"));
  CHECK_THROWS_WITH(spec_of({"--nodes", "4", "--crash", "6@3"}), Catch::Contains("rank 6"));
  CHECK_THROWS_WITH(spec_of({"--timeout", "0"}), Catch::Contains("positive"));
  CHECK_THROWS_WITH(spec_of({"--loss", "0.9"}), Catch::Contains("0 to 0.5"));
  CHECK_THROWS_WITH(spec_of({"--steps", "5", "--epochs", "2"}), Catch::Contains("not both"));
  CHECK_THROWS_WITH(spec_of({"--lr", "-1"}), Catch::Contains("--lr"));
  CHECK_THROWS_WITH(spec_of({"--allreduce", "nccl"}), Catch::Contains("--device cuda"));
  CHECK_THROWS_WITH(spec_of({"--allreduce", "fast"}), Catch::Contains("unknown algorithm"));
  CHECK_THROWS_WITH(spec_of({"--model", "mlp:x"}), Catch::Contains("mlp:x"));
  CHECK_THROWS_WITH(spec_of({"--save", "/no/such/dir/p.npz"}), Catch::Contains("does not exist"));
  CHECK_THROWS_WITH(spec_of({"--checkpoint-every", "5"}), Catch::Contains("--checkpoint-dir"));
  for (const auto& e : {std::vector<std::string>{"--nodes", "300"}, {"--timeout", "0"}}) {
    try {
      spec_of(e);
      FAIL("no error for " << e[0]);
    } catch (const Error& error) {
      CHECK(error.exit_code() == kExitUsage);
    }
  }
}

TEST_CASE("MPI ranks take --nodes and --timeout, and refuse the simulator's network") {
  const RunSpec any = spec_of({"--backend", "mpi"});
  CHECK(any.backend == Backend::mpi);
  CHECK(any.cluster.nodes == 0);  // as many as mpirun starts
  const RunSpec four = spec_of({"--backend", "mpi", "--nodes", "4", "--timeout", "5s"});
  CHECK(four.cluster.nodes == 4);
  CHECK(four.cluster.timeout == std::chrono::seconds(5));
  CHECK_THROWS_WITH(spec_of({"--backend", "mpi", "--latency", "2ms"}),
                    Catch::Contains("--latency is for simulated"));
  CHECK_THROWS_AS(spec_of({"--backend", "mpi", "--crash", "1@20"}), UsageError);
}

TEST_CASE("DDP's buckets survive the run description's JSON form") {
  const RunSpec s = spec_of({"--bucket-mb", "4", "--first-bucket-mb", "0.5", "--nodes", "8"});
  const RunSpec back = run_spec_from_json(run_spec_json(s), "test");
  CHECK(back.bucket_mb == 4);
  CHECK(back.first_bucket_mb == 0.5);
  CHECK(train_config(back).bucket_bytes == 4 << 20);
  CHECK(train_config(back).first_bucket_bytes == 512 << 10);
  CHECK(describe_run(back).find("auto, 8 nodes, 4 MB buckets") == 0);
  CHECK(train_config(spec_of({})).bucket_bytes == 0);
}

TEST_CASE("local SGD survives the run description's JSON form") {
  const RunSpec s = spec_of({"--local-sgd", "8", "--local-sgd-start", "40", "--nodes", "8"});
  const RunSpec back = run_spec_from_json(run_spec_json(s), "test");
  CHECK(back.local_sgd == 8);
  CHECK(back.local_sgd_start == 40);
  CHECK(train_config(back).local_period == 8);
  CHECK(train_config(back).local_start == 40);
  CHECK(describe_run(back).find("auto, 8 nodes, local SGD every 8 steps from step 40") == 0);
  CHECK(train_config(spec_of({})).local_period == 0);
}

TEST_CASE("a run description survives its JSON form") {
  RunSpec s = spec_of({"--scenario",  scenario("flaky-wan.toml"),
                       "--nodes",     "8",
                       "--allreduce", "halving_doubling",
                       "--bandwidth", "100Mbit",
                       "--crash",     "3@20",
                       "--straggler", "2:4",
                       "--model",     "mlp:16,8",
                       "--steps",     "40",
                       "--lr",        "0.05",
                       "--seed",      "7",
                       "--no-shuffle"});
  const RunSpec back = run_spec_from_json(run_spec_json(s), "test");
  CHECK(run_spec_json(back) == run_spec_json(s));
  CHECK(back.cluster.nodes == 8);
  CHECK(back.allreduce == Algorithm::halving_doubling);
  CHECK(back.cluster.network.link.bandwidth_Bps == Approx(12.5e6));
  CHECK(back.cluster.node_overrides.at(3).crash_at_step == 20);
  CHECK(back.cluster.node_overrides.at(2).straggler == 4.0);
  CHECK(back.cluster.network.overrides.size() == s.cluster.network.overrides.size());
  CHECK(back.model == "mlp:16,8");
  CHECK(back.sgd.lr == Approx(0.05));
  CHECK_FALSE(back.shuffle);
  CHECK(describe_run(back) == describe_run(s));
  CHECK(describe_run(back).find("halving_doubling, 8 nodes") == 0);
  CHECK(describe_run(back).find("100 Mbit/s") != std::string::npos);

  CHECK_THROWS_AS(run_spec_from_json("[1, 2]", "t.json"), DataError);
  CHECK_THROWS_WITH(run_spec_from_json(R"({"allreduce": "fast"})", "t.json"),
                    Catch::Contains("t.json"));
}

TEST_CASE("the network's description names the links that differ, in the units given") {
  sim::ClusterOptions c;
  c.network.link.latency_s = 0.01;
  c.network.link.bandwidth_Bps = 1.25e8;
  c.network.overrides.push_back({.from = 0, .to = 1, .latency_s = 0.03});
  std::string d = sim::describe_network(c);
  CHECK(d.find("latency 10 ms, bandwidth 1 Gbit/s") == 0);
  CHECK(d.find("link 0->1: latency 30 ms") != std::string::npos);
  c.network.overrides.push_back({.from = 2, .bandwidth_Bps = 1.25e6});
  d = sim::describe_network(c);
  CHECK(d.find("links from 2: bandwidth 10 Mbit/s") != std::string::npos);
  // Many overrides: a count, so the caption stays one line.
  for (int i = 0; i < 3; ++i)
    c.network.overrides.push_back({.to = i, .loss = 0.01});
  CHECK(sim::describe_network(c).find("5 link overrides") != std::string::npos);
}

TEST_CASE("a compression hook survives the run description's JSON form") {
  const RunSpec s = spec_of({"--compress", "powersgd:2", "--powersgd-start", "50"});
  const RunSpec back = run_spec_from_json(run_spec_json(s), "test");
  CHECK(back.compress == "powersgd:2");
  CHECK(back.powersgd_start == 50);
  const TrainConfig c = train_config(back);
  CHECK(c.compress == CompressSpec{.kind = CompressSpec::Kind::powersgd, .rank = 2});
  CHECK(c.powersgd_start == 50);
  CHECK(describe_run(back).find("auto, 4 nodes, powersgd:2 compression") == 0);
  CHECK(train_config(spec_of({})).compress.kind == CompressSpec::Kind::none);
  CHECK(train_config(spec_of({"--compress", "none"})).compress.kind == CompressSpec::Kind::none);
}
