// The Communicator conformance suite (tests/conformance/) on simulated nodes, one CTest test
// per world size R = 1..9. The same suite runs on MPI ranks (tests/mpi/mpi_comm_test.cpp).
// Catch2's assertions are not thread-safe: each node records into its own Report, and the
// test's thread turns the reports into checks after run_cluster has joined the nodes.
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "sim/cluster.h"
#include "tests/conformance/communicator_suite.h"

using namespace dsgd;

namespace {

void run_on_simulated_nodes(int world) {
  std::vector<conformance::Report> reports;
  for (int r = 0; r < world; ++r)
    reports.emplace_back(fmt::format("R={} rank {}", world, r));
  // Deadlock detection off: the suite's deadline check has every rank wait for a message
  // nobody sends, which the detector would report before the deadline fires.
  const sim::ClusterOptions options{
      .nodes = world, .timeout = std::chrono::seconds(20), .detect_deadlock = false};
  std::string error;
  try {
    sim::run_cluster(options, [&](Communicator& comm) {
      conformance::run_communicator_suite(comm, reports[comm.rank()]);
    });
  } catch (const std::exception& e) {
    error = e.what();
  }
  for (const conformance::Report& report : reports) {
    for (const std::string& failure : report.failures())
      FAIL_CHECK(failure);
    INFO(report.who() << ": " << report.checks() << " checks");
    CHECK(report.checks() > 0);
  }
  CHECK(error.empty());
}

}  // namespace

#define CONFORMANCE_ON_SIMULATED_NODES(R)                           \
  TEST_CASE("Communicator conformance on " #R " simulated node(s)", \
            "[conformance][collectives][sim]") {                    \
    run_on_simulated_nodes(R);                                      \
  }

CONFORMANCE_ON_SIMULATED_NODES(1)
CONFORMANCE_ON_SIMULATED_NODES(2)
CONFORMANCE_ON_SIMULATED_NODES(3)
CONFORMANCE_ON_SIMULATED_NODES(4)
CONFORMANCE_ON_SIMULATED_NODES(5)
CONFORMANCE_ON_SIMULATED_NODES(6)
CONFORMANCE_ON_SIMULATED_NODES(7)
CONFORMANCE_ON_SIMULATED_NODES(8)
CONFORMANCE_ON_SIMULATED_NODES(9)
