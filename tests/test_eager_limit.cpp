// MPI's eager limit on simulated nodes (sim/node.h, NodeOptions::eager_bytes): a blocking
// send up to the limit completes at once, a larger one only once its receive is posted, so
// programs that are unsafe under Open MPI deadlock here too. The sizes are those of
// tests/mpi/eager_limit.sh, which checks them against Open MPI over TCP.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "core/comm/communicator.h"
#include "core/errors.h"
#include "sim/cluster.h"
#include "sim/frame.h"

using namespace dsgd;
using namespace std::chrono_literals;

namespace {

constexpr size_t kEagerFloats = 16000;  // 64000 bytes: under Open MPI's 64 KiB over TCP
constexpr size_t kLargeFloats = 17000;  // 68000 bytes: over it

// Both ranks send first, then receive (lesson 3).
void send_first(Communicator& comm, size_t count) {
  std::vector<float> mine(count, static_cast<float>(comm.rank() + 1)), theirs(count);
  const int other = 1 - comm.rank();
  comm.send(mine, other, 0);
  comm.recv(theirs, other, 0);
  if (theirs.front() != static_cast<float>(other + 1) || theirs.back() != theirs.front())
    throw std::runtime_error("wrong data received");
}

// The DeadlockError's text of a 2-node run of `fn`, or "" when it completes.
std::string deadlock_of(const sim::NodeFunction& fn, size_t eager_bytes = 64 * 1024) {
  sim::ClusterOptions options{.nodes = 2, .timeout = 20s};
  options.node.eager_bytes = eager_bytes;
  try {
    sim::run_cluster(options, fn);
  } catch (const DeadlockError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("both ranks sending first completes under the eager limit and deadlocks above it",
          "[sim][eager]") {
  CHECK(deadlock_of([](Communicator& c) { send_first(c, kEagerFloats); }).empty());
  const std::string report = deadlock_of([](Communicator& c) { send_first(c, kLargeFloats); });
  CHECK_THAT(report,
             Catch::Contains("rank 0 waits in send to rank 1, tag 0 (68000 bytes, over the eager "
                             "limit of 65536 bytes: it waits for rank 1 to post the receive)") &&
                 Catch::Contains("rank 1 waits in send to rank 0, tag 0"));
  SECTION("the limit is the largest eager send, and configurable") {
    CHECK(deadlock_of([](Communicator& c) { send_first(c, 16384); }).empty());
    CHECK_FALSE(deadlock_of([](Communicator& c) { send_first(c, 16385); }).empty());
    CHECK(deadlock_of([](Communicator& c) { send_first(c, kLargeFloats); }, 1 << 20).empty());
    CHECK_FALSE(deadlock_of([](Communicator& c) { send_first(c, 1); }, 0).empty());
  }
}

TEST_CASE("posting the send with isend fixes the send-send cycle at any size", "[sim][eager]") {
  CHECK(deadlock_of([](Communicator& comm) {
          std::vector<float> mine(kLargeFloats, 1.0f), theirs(kLargeFloats);
          const int other = 1 - comm.rank();
          Request sent = comm.isend(mine, other, 0);
          comm.recv(theirs, other, 0);
          comm.wait(sent);
        }).empty());
}

TEST_CASE("tags received out of order deadlock above the eager limit (lesson 2's demo)",
          "[sim][eager]") {
  const auto tags_swapped = [](size_t count) {
    return [count](Communicator& comm) {
      std::vector<float> a(count, 10.0f), b(count, 20.0f);
      if (comm.rank() == 0) {
        comm.send(a, 1, 1);
        comm.send(b, 1, 2);
      } else {
        comm.recv(b, 0, 2);
        comm.recv(a, 0, 1);
      }
    };
  };
  CHECK(deadlock_of(tags_swapped(1)).empty());
  CHECK_THAT(deadlock_of(tags_swapped(kLargeFloats)),
             Catch::Contains("rank 0 waits in send to rank 1, tag 1") &&
                 Catch::Contains("rank 1 waits in recv from rank 0, tag 2"));
}

TEST_CASE("a send above the eager limit ends, in model time, when its receive is posted",
          "[sim][eager]") {
  // Rank 1 computes for 1 s of model time before it receives; rank 0's blocking send of a
  // large message waits for that receive, while an eager one returns at once.
  for (const size_t count : {kEagerFloats, kLargeFloats}) {
    double sender_model_s = -1;
    sim::ClusterOptions options{.nodes = 2, .timeout = 20s};
    options.node.gflops = 1;
    sim::run_cluster(options, [&](Communicator& comm) {
      std::vector<float> v(count, 1.0f);
      if (comm.rank() == 0) {
        comm.send(v, 1, 0);
        sender_model_s = comm.model_s();
      } else {
        comm.on_compute(0, 1e9);  // 1 s at 1 GFLOP/s
        comm.recv(v, 0, 0);
      }
    });
    INFO(count << " floats");
    if (count == kEagerFloats)
      CHECK(sender_model_s < 0.5);
    else
      CHECK(sender_model_s >= 1.0);
  }
}

TEST_CASE("a send waiting for its receive fails with the receiver's crash, not at its deadline",
          "[sim][eager]") {
  sim::ClusterOptions options{.nodes = 2, .timeout = 60s};
  options.node_overrides[1] = options.node;
  options.node_overrides[1].crash_at_step = 0;
  std::string error;
  const auto start = std::chrono::steady_clock::now();
  sim::run_cluster(options, [&](Communicator& comm) {
    std::vector<float> v(kLargeFloats, 1.0f);
    if (comm.rank() == 1) {
      comm.recv(std::span(v).first(1), 0, 7);  // the large send arrives, unmatched
      comm.on_step(0);                         // and the receiver dies
    } else {
      comm.send(std::span(v).first(1), 1, 7);
      try {
        comm.send(v, 1, 0);
      } catch (const CommError& e) {
        error = e.what();
      }
    }
  });
  CHECK_THAT(error, Catch::Contains("lost rank 1") && !Catch::Contains("deadline"));
  CHECK(std::chrono::steady_clock::now() - start < 30s);  // well before the 60 s deadline
}

TEST_CASE("a matched frame carries no payload", "[sim][eager][wire]") {
  sim::FrameHeader h{.kind = sim::FrameKind::matched, .source = 1, .seq = 3};
  std::string why;
  CHECK(sim::decode_header(sim::encode_header(h), &why));
  h.length = 4;
  CHECK_FALSE(sim::decode_header(sim::encode_header(h), &why));
  CHECK_THAT(why, Catch::Contains("matched frame with a payload"));
}
