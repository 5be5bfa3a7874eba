// Workloads on SimGrid ranks (core/workload, `dsgd bench workload`) and the cluster
// topologies SimGrid builds: a message's latency is its route's links; a contention-free
// ring on a torus takes what the alpha-beta model says; a DDP step overlaps its buckets'
// all-reduces with backward as the step's arithmetic says; the command prints, warns and
// writes what it measured. Each simulation runs in a child process (SimGrid starts once).
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "child_process.h"
#include "cli_runner.h"
#include "core/comm/collectives.h"
#include "core/comm/cost_model.h"
#include "core/workload/astra_workload.h"
#include "core/workload/workload_step.h"
#include "skip.h"

#ifdef DSGD_HAVE_SIMGRID
#include "sim/cluster_shape.h"
#include "sim/simgrid/sg_cluster.h"
#endif

using namespace dsgd;
using dsgd::test::in_child;

namespace {

// Two layers: 1 ms forward and 2 ms backward each, 1 MB of gradients each.
Workload two_layers() {
  std::istringstream in(
      "DATA\n2\n"
      "a -1 1000000 NONE 0 1000000 NONE 0 1000000 ALLREDUCE 1000000 0\n"
      "b -1 1000000 NONE 0 1000000 NONE 0 1000000 ALLREDUCE 1000000 0\n");
  return parse_astra_workload(in, "two.txt");
}

}  // namespace

TEST_CASE("workload buckets: DDP's caps over layers, a bucket per layer, or one in all",
          "[workload]") {
  const Workload w = two_layers();
  const std::vector<WorkloadBucket> per_layer = workload_buckets(w, 1, 1);
  REQUIRE(per_layer.size() == 2);
  CHECK(per_layer[0].lowest == 1);  // backward's order: the last layer first
  CHECK(per_layer[1].lowest == 0);
  const std::vector<WorkloadBucket> one = workload_buckets(w, 4 << 20, 25 << 20);
  REQUIRE(one.size() == 1);
  CHECK(one[0].bytes == 2'000'000);
  CHECK(one[0].floats() == 500'000);
  const std::vector<WorkloadBucket> all = workload_buckets(w, 1 << 20, 0);  // no buckets
  REQUIRE(all.size() == 1);
  CHECK(all[0].lowest == 0);
  CHECK(all[0].highest == 1);
  // A first cap of 0 bytes closes no empty bucket: the first holds the last layer.
  const std::vector<WorkloadBucket> first_zero = workload_buckets(w, 0, 1 << 20);
  REQUIRE(first_zero.size() == 2);
  CHECK(first_zero[0].bytes == 1'000'000);
}

#ifdef DSGD_HAVE_SIMGRID

TEST_CASE("SimGrid fat-tree: a message's latency is its route's links, each counted", "[simgrid]") {
  const double latency = 1e-6, bandwidth = 1e9;
  const std::string got = in_child([&] {
    sim::ClusterOptions o{.nodes = 4};
    sim::set_topology(o.network, "fat-tree:2;2,2;1,2;1,1");  // two leaves of two hosts
    o.network.link = {.latency_s = latency, .bandwidth_Bps = bandwidth};
    double near = 0, sent = 0, far = 0;
    const sim::sg::SgResult result = sim::sg::run_simgrid(o, [&](Communicator& comm) {
      std::vector<float> data(250'000);          // 1 MB: 1 ms on a link
      if (comm.rank() == 0) comm.send(data, 1);  // same leaf: up and down, 2 links
      if (comm.rank() == 1) comm.recv(data, 0), near = comm.model_s();
      if (comm.rank() == 3) comm.send(data, 2);  // the other leaf, at the same time
      if (comm.rank() == 2) comm.recv(data, 3);  // then, its uplink free again:
      if (comm.rank() == 0) sent = comm.model_s(), comm.send(data, 2);  // across: 4 links
      if (comm.rank() == 2) comm.recv(data, 0), far = comm.model_s();
    });
    double most = 0;
    for (const sim::LinkUse& l : result.links)
      most = std::max(most, l.bytes);
    return fmt::format("{:.12f} {:.12f} {} {:.0f}", near, far - sent, result.links.size(), most);
  });
  std::istringstream in(got);
  double near = 0, far = 0, most = 0;
  size_t links = 0;
  in >> near >> far >> links >> most;
  INFO(got);
  CHECK(near == Approx(1e-3 + 2 * latency).epsilon(1e-9));
  CHECK(far == Approx(1e-3 + 4 * latency).epsilon(1e-9));
  CHECK(links == 6);   // 4 host links (up or down), a leaf's uplink and a spine's downlink
  CHECK(most == 2e6);  // rank 0's uplink carried both megabytes, and rank 2's downlink
}

TEST_CASE("SimGrid torus: a ring all-reduce on a ring of hosts takes the alpha-beta time",
          "[simgrid]") {
  const double latency = 5e-6, bandwidth = 1e9;
  const size_t bytes = 8 << 20;
  const std::string got = in_child([&] {
    sim::ClusterOptions o{.nodes = 8};
    sim::set_topology(o.network, "torus:8");  // each ring neighbour one link away
    o.network.link = {.latency_s = latency, .bandwidth_Bps = bandwidth};
    double took = 0;
    sim::sg::run_simgrid(o, [&](Communicator& comm) {
      std::vector<float> data(bytes / 4, 1.0f);
      const double start = comm.model_s();
      all_reduce(comm, data, ReduceOp::SUM, {.algorithm = Algorithm::ring});
      if (comm.rank() == 0) took = comm.model_s() - start;
    });
    return fmt::format("{:.12f}", took);
  });
  const double predicted = collective_cost(CollectiveOp::all_reduce, Algorithm::ring, 8, bytes)
                               .predict_s(latency, bandwidth);
  CHECK(std::stod(got) == Approx(predicted).epsilon(0.01));
}

TEST_CASE("SimGrid dragonfly and fat-tree of awkward sizes: every pair has a route", "[simgrid]") {
  for (const char* topology : {"dragonfly", "fat-tree", "torus"})
    for (int nodes : {2, 6, 37, 120}) {
      INFO(topology << " on " << nodes);
      const std::string got = in_child([&] {
        sim::ClusterOptions o{.nodes = nodes};
        sim::set_topology(o.network, topology);
        o.network.link = {.latency_s = 1e-6, .bandwidth_Bps = 1e9};
        std::string wrong;
        sim::sg::run_simgrid(o, [&](Communicator& comm) {
          std::vector<float> data(1000, float(comm.rank() + 1));
          all_reduce(comm, data, ReduceOp::SUM, {.algorithm = Algorithm::naive});
          if (data[0] != float(comm.size() * (comm.size() + 1) / 2)) wrong += "x";
        });
        return wrong.empty() ? std::string("ok") : "wrong sums on " + std::to_string(wrong.size());
      });
      CHECK(got == "ok");
    }
}

TEST_CASE("SimGrid workload: buckets overlap backward, and the step is what that gives",
          "[simgrid]") {
  const double latency = 10e-6, bandwidth = 1e9;
  const Workload w = two_layers();
  const std::string got = in_child([&] {
    StepTimes times;
    sim::ClusterOptions o{.nodes = 2};
    o.network.link = {.latency_s = latency, .bandwidth_Bps = bandwidth};
    sim::sg::run_simgrid(o, [&](Communicator& comm) {
      const WorkloadPlan plan{.workload = w,
                              .buckets = workload_buckets(w, 1, 1),  // a bucket per layer
                              .all_reduce = {.algorithm = Algorithm::ring}};
      std::vector<float> gradients(500'000);
      const StepTimes t = run_workload_step(comm, plan, {}, gradients);
      if (comm.rank() == 0) times = t;
    });
    return fmt::format("{:.12f} {:.12f}", times.compute_s, times.total_s);
  });
  std::istringstream in(got);
  double compute = 0, total = 0;
  in >> compute >> total;
  // Forward 2 ms, backward 4 ms; layer b's bucket (ready at 4 ms) is reduced while layer a's
  // backward runs; layer a's (ready at 6 ms) is exposed.
  const double reduce = collective_cost(CollectiveOp::all_reduce, Algorithm::ring, 2, 1'000'000)
                            .predict_s(latency, bandwidth);
  REQUIRE(reduce < 2e-3);
  CHECK(compute == Approx(6e-3).epsilon(1e-9));
  CHECK(total == Approx(6e-3 + reduce).epsilon(1e-6));
}

TEST_CASE("dsgd bench workload: per-step rows, the busiest links, JSON, and warnings",
          "[simgrid]") {
  test::TempDir dir;
  {
    std::ofstream file(dir / "two.txt");
    file << "DATA\n2\n"
            "a -1 1000000 NONE 0 1000000 NONE 0 1000000 ALLREDUCE 1000000 0\n"
            "b -1 1000000 NONE 0 1000000 NONE 0 1000000 ALLREDUCE 1000000 0\n";
  }
  const test::CliResult r = test::run_dsgd(fmt::format(
      "bench workload --backend simgrid --workload {} --nodes 4 --topology fat-tree "
      "--latency 10us --bandwidth 10Gbit --gflops 50 --bucket-mb 0.001 --first-bucket-mb 0.001 "
      "--json {}",
      dir / "two.txt", dir / "out.json"));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("two.txt on 4 SimGrid ranks (virtual time, phantom payloads)"));
  CHECK_THAT(r.out, Catch::Contains("fat-tree 1;4;1;1, 10 us a link"));
  CHECK_THAT(r.out, Catch::Contains("# busiest links"));
  CHECK_THAT(r.out, Catch::Contains("warning: --gflops had no effect: two.txt's compute is given "
                                    "in time"));
  const nlohmann::json j = nlohmann::json::parse(test::read_text(dir / "out.json"));
  REQUIRE(j["steps"].size() == 1);
  CHECK(j["steps"][0]["ranks"].size() == 4);
  CHECK(j["steps"][0]["ranks"][0]["compute_s"].get<double>() == Approx(6e-3).epsilon(1e-6));
  CHECK(j["payload"] == "phantom");

  const test::CliResult alone =
      test::run_dsgd("bench workload --backend simgrid --nodes 1 --latency 1ms");
  CHECK(alone.exit_code == 0);
  CHECK_THAT(alone.out, Catch::Contains("warning: --latency had no effect: no message crossed "
                                        "the network (1 node)"));
  const test::CliResult bad = test::run_dsgd("bench workload --workload resnet5");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("--workload resnet5: no such model"));
}

TEST_CASE("dsgd bench workload: simulated nodes and SimGrid ranks agree on a step", "[simgrid]") {
  const std::string flags =
      "bench workload --workload resnet50 --nodes 2 --latency 100us --bandwidth 1Gbit "
      "--batch-per-rank 2 --algorithm ring --payload real --backend ";
  const test::CliResult sim = test::run_dsgd(flags + "sim");
  const test::CliResult sg = test::run_dsgd(flags + "simgrid");
  INFO(sim.out << sim.err << sg.out << sg.err);
  REQUIRE(sim.exit_code == 0);
  REQUIRE(sg.exit_code == 0);
  auto row = [](const std::string& out) {
    const size_t at = out.find("\n     1 ");
    return at == std::string::npos ? std::string() : out.substr(at, out.find('\n', at + 1) - at);
  };
  CHECK(!row(sim.out).empty());
  CHECK(row(sim.out) == row(sg.out));
}

TEST_CASE("SimGrid's LV08 model (--network-model lv08) scales a small message's latency by 13",
          "[simgrid]") {
  test::TempDir dir;
  auto time_us = [&](const std::string& model) {
    const std::string json = dir / (model + ".json");
    const test::CliResult r = test::run_dsgd(
        "bench collective --backend simgrid --algorithm ring --nodes 4 --latency 100us "
        "--bandwidth 1Gbit --min-bytes 4K --max-bytes 4K --topology switch --network-model " +
        model + " --json " + json);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out,
               Catch::Contains("SimGrid's " + std::string(model == "lv08" ? "LV08" : "CM02")));
    return nlohmann::json::parse(test::read_text(json))["rows"][0]["time_us"].get<double>();
  };
  const double cm02 = time_us("cm02"), lv08 = time_us("lv08");
  // 6 steps of 1 KiB: latency-bound; LV08 multiplies the latency by 13.01.
  CHECK(lv08 / cm02 > 12.0);
  CHECK(lv08 / cm02 < 13.1);
  const test::CliResult on_nodes = test::run_dsgd("train --steps 1 --network-model lv08");
  CHECK(on_nodes.exit_code == 2);
  CHECK_THAT(on_nodes.err, Catch::Contains("--network-model lv08 is SimGrid's"));
}

#else

TEST_CASE("SimGrid workloads and topologies", "[simgrid]") {
  DSGD_SKIP_UNLESS("simgrid", false,
                   "this build has no SimGrid backend (apt-get install libsimgrid-dev)");
}

#endif
