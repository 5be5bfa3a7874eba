// The simulated transport beyond what every backend must do (that is the conformance
// suite, tests/conformance/, run by test_conformance.cpp): the cluster's own deadline and
// failure propagation, deadlock reports, frames, units, and the link model's timing
// (wall time only as a bound).
// Catch2's assertions are not thread-safe: node functions only record what they saw (each
// rank in its own slot) and the test's thread checks it after run_cluster has joined them.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "core/comm/collectives.h"
#include "core/errors.h"
#include "sim/cluster.h"
#include "sim/frame.h"
#include "sim/link_model.h"
#include "wait_until.h"

using namespace dsgd;
using namespace std::chrono_literals;

TEST_CASE("a receive that nobody answers fails at its deadline", "[sim][timeout]") {
  const auto start = std::chrono::steady_clock::now();
  try {
    // Deadlock detection off: this checks the deadline itself.
    sim::run_cluster({.nodes = 2, .timeout = 300ms, .detect_deadlock = false},
                     [](Communicator& comm) {
                       if (comm.rank() == 1) {
                         std::vector<float> v(1);
                         comm.recv(v, 0, 3);  // rank 0 never sends
                       }
                     });
    FAIL("expected a TimeoutError");
  } catch (const TimeoutError& e) {
    CHECK(e.peer() == 0);
    CHECK_THAT(e.what(), Catch::Contains("rank 1: recv from rank 0 (tag 3)"));
    CHECK(e.exit_code() == kExitComm);
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(elapsed >= 0.29);
  CHECK(elapsed < 5.0);
}

TEST_CASE("the first failure stops the other nodes and is rethrown", "[sim]") {
  const auto start = std::chrono::steady_clock::now();
  REQUIRE_THROWS_WITH(sim::run_cluster({.nodes = 4, .timeout = 20s},
                                       [](Communicator& comm) {
                                         if (comm.rank() == 2) throw DataError("boom on rank 2");
                                         std::vector<float> v(4);
                                         comm.recv(v, 2);  // would wait 20 s without the abort
                                       }),
                      "boom on rank 2");
  CHECK(std::chrono::steady_clock::now() - start < 10s);
}

TEST_CASE("failure() says a peer crashed, for waits outside the network (NCCL)", "[sim]") {
  sim::ClusterOptions options{.nodes = 3};
  options.node_overrides[2].crash_at_step = 1;
  std::vector<std::string> before(3), after(3);
  sim::run_cluster(options, [&](Communicator& comm) {
    before[comm.rank()] = comm.failure();
    barrier(comm);
    comm.on_step(1);  // rank 2 crashes here: its connections drop
    // The others never talk to rank 2 again; only failure() can tell them it is gone.
    test::wait_for([&] { return !comm.failure().empty(); }, 10s);
    after[comm.rank()] = comm.failure();
  });
  for (int r = 0; r < 2; ++r) {
    INFO("rank " << r);
    CHECK(before[r].empty());
    CHECK_THAT(after[r], Catch::StartsWith("rank 2: "));
  }
}

TEST_CASE("node counts outside 1..256 are refused", "[sim]") {
  auto noop = [](Communicator&) {};
  CHECK_THROWS_AS(sim::run_cluster({.nodes = 0}, noop), UsageError);
  CHECK_THROWS_AS(sim::run_cluster({.nodes = 100000}, noop), UsageError);
}

TEST_CASE("latency and bandwidth delay messages as the link model says", "[sim][link]") {
  // 5 ms latency, 8 Mbit/s: a 100 000-byte message occupies the link for 0.1 s.
  // Model time must follow the link model exactly; wall time is bounded only from below
  // (a message is never delivered early, beyond the stamping allowance below). bench/bench_fidelity
  // measures how close it gets.
  sim::ClusterOptions options{.nodes = 2};
  options.network.link = {.latency_s = 0.005, .bandwidth_Bps = 1e6};
  double small_s = 0, large_s = 0, small_model_s = 0, large_model_s = 0;
  sim::run_cluster(options, [&](Communicator& comm) {
    std::vector<float> small(1), large(25000);
    for (auto* buf : {&small, &large}) {
      barrier(comm);
      const auto t0 = std::chrono::steady_clock::now();
      const double model0 = comm.model_s();
      if (comm.rank() == 0) {
        comm.send(*buf, 1);
        comm.recv(*buf, 1);  // ping-pong: two one-way trips
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        (buf == &small ? small_s : large_s) = s;
        (buf == &small ? small_model_s : large_model_s) = comm.model_s() - model0;
      } else {
        comm.recv(*buf, 0);
        comm.send(*buf, 0);
      }
    }
  });
  // Model: small = 2 * (5 ms + 4 us), large = 2 * (5 ms + 100 ms).
  CHECK(small_model_s == Approx(2 * (0.005 + 4 / 1e6)).epsilon(1e-6));
  CHECK(large_model_s == Approx(2 * (0.005 + 1e5 / 1e6)).epsilon(1e-6));
  // Less up to 0.5 ms per hop: a send is stamped as if its thread had woken on time.
  CHECK(small_s >= 2 * (0.005 + 4 / 1e6) - 2 * 0.0005);
  CHECK(large_s >= 2 * (0.005 + 1e5 / 1e6) - 2 * 0.0005);
}

TEST_CASE("a node released in the past stamps its sends from then, at most 0.5 ms early",
          "[sim][link]") {
  // What bench_fidelity relies on: 16 threads released by one barrier on 2 cores get a core
  // up to ~1 ms apart, and each sends as if it had started at the release.
  double before = 0, stamp = 0, after = 0, capped_now = 0, capped_stamp = 0, later = 0,
         later_stamp = 0;
  sim::run_cluster({.nodes = 2}, [&](Communicator& comm) {
    if (comm.rank() != 0) return;  // Catch2's checks run on the test's thread, below
    auto& node = dynamic_cast<sim::SimNode&>(comm);
    // A release 0.2 ms ago needs a clock past 0.2 ms (nodes start at once: no set-up).
    while (node.net_clock_s() < 0.001)
      std::this_thread::yield();
    before = node.net_clock_s();
    node.released_at(before - 0.0002);
    stamp = node.net_now_s();
    after = node.net_clock_s();
    node.released_at(node.net_clock_s() - 1.0);  // a second late: capped
    capped_now = node.net_clock_s();
    capped_stamp = node.net_now_s();
    later = node.net_clock_s() + 1.0;  // not released yet: no lag, and no send before then
    node.released_at(later);
    later_stamp = node.net_now_s();
  });
  CHECK(stamp >= before - 0.0002);  // never before the release
  CHECK(stamp <= after - 0.0002);   // as if it had started then
  CHECK(capped_stamp >= capped_now - 0.0005 - 1e-9);
  CHECK(later_stamp >= later);
}

TEST_CASE("durations and bandwidths parse with units, and bad ones are refused", "[sim][units]") {
  CHECK(sim::parse_duration_s("2ms", "--latency") == Approx(0.002));
  CHECK(sim::parse_duration_s("150us", "--latency") == Approx(150e-6));
  CHECK(sim::parse_duration_s("0", "--latency") == 0.0);
  CHECK(sim::parse_bandwidth_Bps("1Gbit", "--bandwidth") == Approx(125e6));
  CHECK(sim::parse_bandwidth_Bps("100Mbit/s", "--bandwidth") == Approx(12.5e6));
  CHECK(sim::parse_bandwidth_Bps("10MB/s", "--bandwidth") == Approx(10e6));
  CHECK(sim::parse_bandwidth_Bps("1GiB/s", "--bandwidth") == Approx(1073741824.0));
  CHECK(sim::parse_bandwidth_Bps("0", "--bandwidth") == 0.0);
  for (const char* bad : {"2", "ms", "2 parsecs", "-1ms", "nan", "", "5h"})
    CHECK_THROWS_AS(sim::parse_duration_s(bad, "--latency"), UsageError);
  for (const char* bad : {"100", "fast", "-5Mbit", "1Gbyte", "0Mbit"})
    CHECK_THROWS_AS(sim::parse_bandwidth_Bps(bad, "--bandwidth"), UsageError);
  CHECK_THROWS_WITH(sim::parse_bandwidth_Bps("fast", "--bandwidth"),
                    Catch::Contains("--bandwidth 'fast'") && Catch::Contains("1Gbit"));
}

TEST_CASE("frame headers round-trip and bad ones are rejected before allocation", "[sim][frame]") {
  sim::FrameHeader h{.kind = sim::FrameKind::data,
                     .source = 3,
                     .tag = 17,
                     .seq = 99,
                     .visible_ns = 123456789,
                     .model_ns = 987654321,
                     .length = 4096};
  std::string why;
  auto back = sim::decode_header(sim::encode_header(h), &why);
  REQUIRE(back);
  CHECK(back->source == 3);
  CHECK(back->tag == 17);
  CHECK(back->seq == 99);
  CHECK(back->visible_ns == 123456789);
  CHECK(back->model_ns == 987654321);
  CHECK(back->length == 4096);
  auto bytes = sim::encode_header(h);
  bytes[0] ^= 0xff;
  CHECK_FALSE(sim::decode_header(bytes, &why));
  CHECK_THAT(why, Catch::Contains("magic"));
  h.length = sim::kMaxFrameBytes + 4;
  CHECK_FALSE(sim::decode_header(sim::encode_header(h), &why));
  h.length = 6;  // not whole floats
  CHECK_FALSE(sim::decode_header(sim::encode_header(h), &why));
}

TEST_CASE("two ranks that both receive first are reported as a deadlock, not a hang",
          "[sim][deadlock]") {
  const auto start = std::chrono::steady_clock::now();
  try {
    sim::run_cluster({.nodes = 2, .timeout = 20s}, [](Communicator& comm) {
      std::vector<float> v(2);
      comm.recv(v, 1 - comm.rank(), 0);
      comm.send(v, 1 - comm.rank(), 0);
    });
    FAIL("expected a DeadlockError");
  } catch (const DeadlockError& e) {
    CHECK_THAT(e.what(), Catch::Contains("rank 0 waits in recv from rank 1, tag 0") &&
                             Catch::Contains("rank 1 waits in recv from rank 0, tag 0"));
    CHECK(e.exit_code() == kExitComm);
  }
  CHECK(std::chrono::steady_clock::now() - start < 5s);
}

TEST_CASE("a slow message is not mistaken for a deadlock", "[sim][deadlock]") {
  sim::ClusterOptions options{.nodes = 2};
  options.network.link.latency_s = 0.3;  // both ranks blocked 300 ms with a message in flight
  std::vector<float> got(1);
  sim::run_cluster(options, [&](Communicator& comm) {
    std::vector<float> v{42.0f};
    if (comm.rank() == 0)
      comm.send(v, 1);
    else
      comm.recv(got, 0);
  });
  CHECK(got[0] == 42.0f);
}
