// StepGate: the simulation's thread waits in hold() until the steering thread's step() lets
// its message through; peek() shows the message and leaves it held; with nothing held both
// give nothing at their timeout.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

#include "sim/step_gate.h"
#include "wait_until.h"

using dsgd::sim::StepGate;
using dsgd::sim::StepInfo;
using namespace std::chrono_literals;

TEST_CASE("a step gate holds each message until a step lets it through", "[sim][step]") {
  StepGate gate;
  CHECK_FALSE(gate.peek(10ms));  // nothing held yet
  CHECK_FALSE(gate.step(10ms));
  std::atomic<int> delivered{0};
  std::thread simulation([&] {
    for (int seq = 0; seq < 2; ++seq) {
      gate.hold(StepInfo{.source = 1, .dest = 2, .seq = static_cast<uint64_t>(seq)});
      ++delivered;
    }
  });
  const auto first = gate.peek(10s);
  REQUIRE(first);
  CHECK(first->seq == 0);
  CHECK(gate.peek(10s)->seq == 0);  // still held
  CHECK(delivered == 0);
  const auto stepped = gate.step(10s);
  REQUIRE(stepped);
  CHECK(stepped->source == 1);
  CHECK(stepped->dest == 2);
  CHECK(stepped->seq == 0);
  REQUIRE(dsgd::test::wait_for([&] { return delivered == 1; }));
  const auto second = gate.step(10s);
  REQUIRE(second);
  CHECK(second->seq == 1);
  simulation.join();
  CHECK(delivered == 2);
  CHECK_FALSE(gate.step(10ms));  // nothing more
}
