// The simulated network's behaviour: model time, stragglers, crashes, loss, outages,
// topologies, pause and step mode. Assertions are on model time and order; wall time is
// used only as a bound.
#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "cli_runner.h"
#include "core/comm/collectives.h"
#include "core/errors.h"
#include "core/train/trainer.h"
#include "sim/cluster.h"
#include "sim/control.h"
#include "sim/network.h"
#include "sim/scenario.h"
#include "wait_until.h"

using namespace dsgd;
using namespace std::chrono_literals;

namespace {

// Model time at which rank 0 finished a short training run.
double train_model_time(sim::ClusterOptions options, int64_t steps = 10) {
  const Dataset data = load_dataset("synthetic:train=1024,test=64");
  TrainConfig config;
  config.model = ModelSpec::parse("mlp:64");
  config.steps = steps;
  config.epochs = 0;
  config.eval_every = 1000;
  double model_s = -1;
  sim::run_cluster(options, [&](Communicator& comm) {
    TrainResult r = train(comm, data, config);
    if (comm.rank() == 0) model_s = r.model_s;
  });
  return model_s;
}

}  // namespace

TEST_CASE("a straggler slows every step of sync SGD by its factor, in model time",
          "[network][faults]") {
  // No latency or bandwidth limit: a step's model time is the slowest rank's compute.
  sim::ClusterOptions options{.nodes = 4};
  const double base = train_model_time(options);
  options.node_overrides[2] = sim::NodeOptions{.straggler = 3.0};
  const double slow = train_model_time(options);
  REQUIRE(base > 0);
  CHECK(slow / base == Approx(3.0).epsilon(0.02));
}

TEST_CASE("model time is deterministic for a seed, even with jitter and loss", "[network]") {
  sim::ClusterOptions options{.nodes = 3};
  options.network.link = {
      .latency_s = 0.0005, .bandwidth_Bps = 50e6, .jitter_s = 0.0003, .loss = 0.05};
  options.network.rto_s = 0.002;
  options.network.seed = 11;
  const double a = train_model_time(options, 6), b = train_model_time(options, 6);
  CHECK(a == b);
  options.network.seed = 12;
  CHECK(train_model_time(options, 6) != a);
}

TEST_CASE("loss makes messages late but never wrong", "[network][faults]") {
  sim::ClusterOptions options{.nodes = 2};
  options.network.link = {.latency_s = 0.001, .loss = 0.3};
  options.network.rto_s = 0.005;
  int wrong = 0;
  double model_end = 0;
  sim::run_cluster(options, [&](Communicator& comm) {
    for (int i = 0; i < 40; ++i) {
      std::vector<float> v(3, static_cast<float>(i));
      if (comm.rank() == 0) {
        comm.send(v, 1, 0);
      } else {
        std::fill(v.begin(), v.end(), -1.0f);
        comm.recv(v, 0, 0);
        for (float x : v)
          wrong += x != static_cast<float>(i);
      }
    }
    if (comm.rank() == 1) model_end = comm.model_s();
  });
  CHECK(wrong == 0);
  // 40 messages sent back to back over 1 ms: without loss they all arrive by ~1 ms; with
  // 30 % loss at least one resend (5 ms) happened.
  CHECK(model_end >= 0.001 + 0.005);
}

TEST_CASE("the link model says how often it lost a message: one RTO each", "[network][faults]") {
  sim::NetworkConfig config{.link = {.latency_s = 0.001, .loss = 0.4}, .rto_s = 0.005};
  sim::Network network(config, 2);
  int resent = 0;
  for (int i = 0; i < 200; ++i) {
    const double t = i * 1.0;  // far apart: no queueing, no FIFO hold
    const sim::Network::Arrival a = network.schedule(0, 1, 4, t, t);
    CHECK(a.retransmits >= 0);
    CHECK(a.retransmits <= 16);
    CHECK(a.model_s - t == Approx(0.001 + a.retransmits * 0.005).margin(1e-12));
    resent += a.retransmits > 0;
  }
  // 40 % loss: about 80 of 200 resent at least once.
  CHECK(resent > 40);
  CHECK(resent < 120);
  // No loss: never.
  sim::Network clean({.link = {.latency_s = 0.001}}, 2);
  CHECK(clean.schedule(0, 1, 4, 0, 0).retransmits == 0);
}

TEST_CASE("outage_end: when a message handed over during outages leaves", "[network][faults]") {
  const std::vector<sim::Outage> outages = {
      {.links = {{0, 1}}, .from_s = 1, .until_s = 2},
      {.links = {{0, 1}, {1, 0}}, .from_s = 2, .until_s = 3},  // chained
      {.links = {{2, 3}}, .from_s = 5}};                       // for good
  CHECK(sim::outage_end(outages, 0, 1, 0.5) == 0.5);
  CHECK(sim::outage_end(outages, 0, 1, 1.5) == 3);
  CHECK(sim::outage_end(outages, 1, 0, 1.5) == 1.5);
  CHECK(sim::outage_end(outages, 1, 0, 2.5) == 3);
  CHECK(sim::outage_end(outages, 2, 3, 6) >= 1e299);
  CHECK(sim::outage_end({}, 2, 3, 6) == 6);
}

TEST_CASE("an outage holds messages until the link comes back", "[network][faults]") {
  sim::ClusterOptions options{.nodes = 2};
  options.network.link.latency_s = 0.001;
  options.network.outages.push_back({.links = {{0, 1}}, .from_s = 0, .until_s = 0.05});
  double model_arrival = 0;
  sim::run_cluster(options, [&](Communicator& comm) {
    std::vector<float> v(1, 5.0f);
    if (comm.rank() == 0)
      comm.send(v, 1);
    else {
      comm.recv(v, 0);
      model_arrival = comm.model_s();
    }
  });
  CHECK(model_arrival == Approx(0.051).margin(1e-9));
}

TEST_CASE("an outage that never ends holds messages for good: the deadline names the link",
          "[network][faults]") {
  using namespace std::chrono_literals;
  sim::ClusterOptions options{.nodes = 2, .timeout = 300ms, .detect_deadlock = false};
  options.network.outages.push_back({.links = {{0, 1}}, .from_s = 0});  // no until
  std::string what;
  try {
    sim::run_cluster(options, [&](Communicator& comm) {
      std::vector<float> v(1, 5.0f);
      if (comm.rank() == 0)
        comm.send(v, 1);
      else
        comm.recv(v, 0);
    });
  } catch (const TimeoutError& e) {
    what = e.what();
  }
  INFO(what);
  CHECK_THAT(what, Catch::Contains("rank 1: recv from rank 0") &&
                       Catch::Contains("the link 0 -> 1 is down for good"));
}

TEST_CASE("switch topology shares a node's downlink, a mesh does not", "[network]") {
  // Ranks 1 and 2 each send 1 MB to rank 0 at once over 100 MB/s links.
  auto arrival = [](sim::Topology topology) {
    sim::ClusterOptions options{.nodes = 3};
    options.network.topology = topology;
    options.network.link.bandwidth_Bps = 100e6;
    double last = 0;
    sim::run_cluster(options, [&](Communicator& comm) {
      std::vector<float> v(250000, 1.0f);
      if (comm.rank() != 0) {
        comm.send(v, 0);
        return;
      }
      comm.recv(v, 1);
      comm.recv(v, 2);
      last = comm.model_s();
    });
    return last;
  };
  CHECK(arrival(sim::Topology::mesh) == Approx(0.01));
  CHECK(arrival(sim::Topology::switch_) == Approx(0.02));
}

TEST_CASE("a paused network delivers nothing and its paused time is not network time",
          "[network][control]") {
  // Counters, not timing: while paused the network clock stands still, so no message can
  // become visible, however long the pause. The pause lasts 200 ms of wall time once the
  // message is sent (the scenario, not a wait for something to happen).
  sim::SimControl control;
  EventBuffer events;
  sim::ClusterOptions options{.nodes = 2, .events = &events, .control = &control};
  options.network.link.latency_s = 0.02;
  control.pause();
  double wall_s = 0, model_s = 0;
  auto run = std::async(std::launch::async, [&] {
    sim::run_cluster(options, [&](Communicator& comm) {
      std::vector<float> v(1, 1.0f);
      const auto t0 = std::chrono::steady_clock::now();
      if (comm.rank() == 0)
        comm.send(v, 1);
      else {
        comm.recv(v, 0);
        wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        model_s = comm.model_s();
      }
    });
  });
  const auto count = [&](EventKind kind) {
    const auto all = events.snapshot();
    return std::count_if(all.begin(), all.end(), [&](const Event& e) { return e.kind == kind; });
  };
  // Sent, and the receive begun (after the receiver's t0).
  REQUIRE(test::wait_for(
      [&] { return count(EventKind::send_begin) == 1 && count(EventKind::recv_begin) == 1; }));
  const double paused_at_s = control.clock().now_s();
  std::this_thread::sleep_for(200ms);
  CHECK(control.clock().now_s() == paused_at_s);  // paused time is not network time
  CHECK(count(EventKind::recv_end) == 0);         // so nothing was delivered
  control.resume();
  run.get();
  CHECK(count(EventKind::recv_end) == 1);
  CHECK(wall_s >= 0.2);            // the receive waited out the pause
  CHECK(model_s == Approx(0.02));  // the model saw only the latency
}

TEST_CASE("step mode delivers one message at a time, in the same order every run",
          "[network][control]") {
  auto stepped_run = [] {
    sim::SimControl control;
    control.set_step_mode(true);
    std::vector<std::string> order;
    std::vector<float> sums(3);  // per rank; checked here, not on the node threads
    auto run = std::async(std::launch::async, [&] {
      sim::run_cluster({.nodes = 3, .control = &control}, [&](Communicator& comm) {
        std::vector<float> v{float(comm.rank()), 1, 2, 3, 4};
        all_reduce(comm, v, ReduceOp::SUM, {.algorithm = Algorithm::ring});
        sums[comm.rank()] = v[0];
      });
    });
    while (auto info = control.step(5s))
      order.push_back(std::to_string(info->source) + "->" + std::to_string(info->dest) + "#" +
                      std::to_string(info->seq));
    run.get();
    CHECK(sums == std::vector<float>{3.0f, 3.0f, 3.0f});
    return order;
  };
  const auto first = stepped_run();
  CHECK(first.size() == 12);  // ring, 3 ranks: 2 (R - 1) steps, 3 messages each
  CHECK(stepped_run() == first);
}

TEST_CASE("step mode: network time moves only when a message is released, to its arrival",
          "[network][control]") {
  // Three messages over a 5 ms link, the teacher taking 100 ms of real time between clicks
  // (a spin on the steady clock: the scenario, not a wait for something to happen). The
  // clock reads each message's arrival after its step, and stands still between steps.
  sim::SimControl control;
  control.set_step_mode(true);
  sim::ClusterOptions options{.nodes = 2, .control = &control};
  options.network.link.latency_s = 0.005;
  auto run = std::async(std::launch::async, [&] {
    sim::run_cluster(options, [&](Communicator& comm) {
      std::vector<float> v(1, 1.0f);
      for (int i = 0; i < 3; ++i)
        if (comm.rank() == 0)
          comm.send(v, 1);
        else
          comm.recv(v, 0);
    });
  });
  const auto teacher_thinks = [] {
    const auto until = std::chrono::steady_clock::now() + 100ms;
    while (std::chrono::steady_clock::now() < until)
      std::this_thread::yield();
  };
  std::vector<double> arrivals;
  while (auto info = control.step(5s)) {
    arrivals.push_back(info->net_s);
    const double after_step = control.clock().now_s();
    CHECK(after_step == info->net_s);
    teacher_thinks();
    CHECK(control.clock().now_s() == after_step);  // held between steps
  }
  run.get();
  REQUIRE(arrivals.size() == 3);
  // Sent back to back at the start: each arrives one latency later, well before the
  // 300 ms the clicks took.
  for (double t : arrivals)
    CHECK(t == Approx(0.005).margin(0.004));
  CHECK(std::is_sorted(arrivals.begin(), arrivals.end()));
}

TEST_CASE("the default link can change while a run goes on: later messages use it",
          "[network][control]") {
  // Ping, pong, then rank 0 changes the latency from 5 ms to 50 ms and pings again: in model
  // time the pong lands at 10 ms and the second ping 50 ms after it was sent.
  sim::SimControl control;
  sim::ClusterOptions options{.nodes = 2, .control = &control};
  options.network.link.latency_s = 0.005;
  std::vector<double> arrivals;  // rank 1's, then rank 0's, then rank 1's
  std::mutex mutex;
  sim::run_cluster(options, [&](Communicator& comm) {
    std::vector<float> v(1, 1.0f);
    const auto record = [&] {
      std::lock_guard lock(mutex);
      arrivals.push_back(comm.model_s());
    };
    if (comm.rank() == 0) {
      comm.send(v, 1);
      comm.recv(v, 1);
      record();
      REQUIRE(control.set_link({.latency_s = 0.05}));
      comm.send(v, 1);
    } else {
      comm.recv(v, 0);
      record();
      comm.send(v, 0);
      comm.recv(v, 0);
      record();
    }
  });
  REQUIRE(arrivals.size() == 3);
  CHECK(arrivals[0] == Approx(0.005));
  CHECK(arrivals[1] == Approx(0.010));
  CHECK(arrivals[2] == Approx(0.060));
  CHECK_FALSE(control.set_link({}));  // the run has ended: no network to change
}

TEST_CASE("scenario files: good ones load, bad ones name file, line and column",
          "[network][scenario]") {
  auto s = sim::parse_scenario(R"(
nodes = 6
[network]
topology = "racks"
racks = 3
latency = "2ms"
bandwidth = "1Gbit"
[network.trunk]
bandwidth = "100Mbit"
[[network.link]]
from = 0
to = 1
latency = "10ms"
[[fault]]
kind = "crash"
rank = 4
step = 7
)",
                               "ok.toml");
  CHECK(s.nodes == 6);
  CHECK(s.network.topology == sim::Topology::racks);
  CHECK(s.network.racks == 3);
  CHECK(s.network.link.latency_s == Approx(0.002));
  CHECK(s.network.trunk.bandwidth_Bps == Approx(12.5e6));
  REQUIRE(s.network.overrides.size() == 1);
  CHECK(s.faults.at(4).crash_at_step == 7);

  CHECK_THROWS_WITH(sim::parse_scenario("[network]\nlatncy = \"2ms\"\n", "typo.toml"),
                    Catch::Contains("typo.toml:2:") && Catch::Contains("unknown key 'latncy'"));
  CHECK_THROWS_WITH(sim::parse_scenario("[network]\nlatency = \"2 parsecs\"\n", "unit.toml"),
                    Catch::Contains("unit.toml:2:") && Catch::Contains("not a duration"));
  CHECK_THROWS_WITH(sim::parse_scenario("nodes = [\n", "broken.toml"),
                    Catch::Contains("broken.toml:"));
  CHECK_THROWS_WITH(sim::parse_scenario("[[fault]]\nkind = \"meteor\"\n", "kind.toml"),
                    Catch::Contains("kind.toml:2:") && Catch::Contains("meteor"));
  CHECK_THROWS_AS(sim::parse_scenario("nodes = 0\n", "zero.toml"), DataError);
  // A float with an integral value is taken for an integer; one past int64_t's range is
  // refused like any other out-of-range value (found by fuzz_scenario: UBSan saw toml++
  // cast it to int64_t).
  CHECK(sim::parse_scenario("nodes = 4.0\n", "float.toml").nodes == 4);
  CHECK_THROWS_WITH(sim::parse_scenario("nodes = 2e116\n", "huge.toml"),
                    Catch::Contains("huge.toml:1:") && Catch::Contains("must be an integer"));
}

TEST_CASE("every shipped scenario runs, and the crash one ends with exit 3 naming the rank",
          "[network][scenario][cli]") {
  for (const char* name : {"classroom-lan", "two-racks", "straggler", "flaky-wan", "partition"}) {
    auto r = test::run_dsgd(std::string("train -q --steps 5 --scenario ") + DSGD_SOURCE_DIR +
                            "/assets/scenarios/" + name + ".toml");
    INFO(name << ": " << r.err);
    CHECK(r.exit_code == 0);
  }
  auto r = test::run_dsgd(std::string("train -q --steps 40 --scenario ") + DSGD_SOURCE_DIR +
                          "/assets/scenarios/crash.toml");
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.err, Catch::Contains("lost rank 1"));
  r = test::run_dsgd("train -q --steps 40 --crash 2@5 --timeout 2s");
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.err, Catch::Contains("rank 2"));
  r = test::run_dsgd("train -q --straggler 9:2");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("rank 9"));
}
