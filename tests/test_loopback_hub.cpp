// The connections of an in-process cluster (sim/loopback_hub.h): a pair is connected when it
// first talks, so a run whose ranks talk over the ring's pairs holds those and no more
// (counted in /proc/self/fd while it runs, and all closed after), and a rank that crashes
// before it ever connected to another ends that one's wait at once, not at its deadline.
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "core/comm/collective_pairs.h"
#include "core/comm/collectives.h"
#include "core/errors.h"
#include "sim/cluster.h"
#include "sim/fd_limit.h"

using namespace dsgd;
using namespace std::chrono_literals;

TEST_CASE("an in-process run opens one connection per pair that talks, none other",
          "[sim][network][fd]") {
  constexpr int kNodes = 16;
  for (Algorithm a : {Algorithm::ring, Algorithm::halving_doubling}) {
    INFO(to_string(a));
    const int64_t before = sim::open_file_count();
    int64_t during = 0;
    sim::run_cluster({.nodes = kNodes}, [&](Communicator& comm) {
      std::vector<float> v(1000, 1.0f);
      all_reduce(comm, v, ReduceOp::SUM, {.algorithm = a});
      // Rank 0's all-gather ends with values that went round the whole ring (every rank has
      // sent, so every pair of the algorithm is connected) and the next one needs the same.
      if (comm.rank() == 0) during = sim::open_file_count();
      all_reduce(comm, v, ReduceOp::SUM, {.algorithm = a});
    });
    const auto pairs =
        static_cast<int64_t>(collective_pairs(CollectiveOp::all_reduce, a, kNodes, 4000).size());
    CHECK(pairs == (a == Algorithm::ring ? kNodes : kNodes * 4 / 2));
    // One eventfd per node, the hub's port, both ends of every pair.
    CHECK(during - before == kNodes + 1 + 2 * pairs);
    CHECK(sim::open_file_count() == before);
  }
}

TEST_CASE("a rank that crashes before it ever connected ends a wait on it at once",
          "[sim][network][fd]") {
  sim::ClusterOptions options{.nodes = 3, .timeout = 20s, .detect_deadlock = false};
  options.node_overrides[2].crash_at_step = 1;
  const auto t0 = std::chrono::steady_clock::now();
  std::string error;
  int peer = -2;
  try {
    sim::run_cluster(options, [](Communicator& comm) {
      if (comm.rank() == 2) comm.on_step(1);  // the crash fault fires before any send
      std::vector<float> v(1);
      if (comm.rank() == 0) comm.recv(v, 2, 0);  // nobody ever connected 0 and 2
    });
  } catch (const TimeoutError& e) {
    error = std::string("timed out: ") + e.what();
  } catch (const CommError& e) {
    error = e.what();
    peer = e.peer();
  }
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(error);
  CHECK(peer == 2);
  CHECK_THAT(error, Catch::Contains("lost rank 2") && Catch::Contains("crashed") &&
                        Catch::Contains("had not connected"));
  CHECK(took < 5.0);  // a bound, far below the 20 s deadline
}
