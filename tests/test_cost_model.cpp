// The alpha-beta cost model on cases computed by hand from what each algorithm's file does.
// R = world size, S = bytes, C = floats.
#include <algorithm>
#include <catch2/catch.hpp>
#include <vector>

#include "core/comm/chunks.h"
#include "core/comm/cost_model.h"
#include "core/errors.h"
#include "sim/cluster.h"

using namespace dsgd;

namespace {

Cost all_reduce_cost(Algorithm a, int world, size_t bytes) {
  return collective_cost(CollectiveOp::all_reduce, a, world, bytes);
}

}  // namespace

TEST_CASE("ring all_reduce: 2(R-1) steps of the largest chunk", "[cost]") {
  const Cost c = all_reduce_cost(Algorithm::ring, 4, 4096);  // 1024 floats, chunks of 256
  CHECK(c.steps == 6);
  CHECK(c.bytes_sent_per_rank == 6 * 256 * 4);
  CHECK(c.critical_path_bytes == 6 * 256 * 4);
  CHECK(c.predict_s(1e-3, 1e6) == Approx(6e-3 + 6144 / 1e6));
  // C = 10 on 3 ranks: chunks 4, 3, 3; every step waits for the 4.
  const Cost uneven = all_reduce_cost(Algorithm::ring, 3, 40);
  CHECK(uneven.steps == 4);
  CHECK(uneven.critical_path_bytes == 4 * 4 * 4);
}

TEST_CASE("naive all_reduce: two latencies on the per-link model, rank 0 sends (R-1) S", "[cost]") {
  const Cost c = all_reduce_cost(Algorithm::naive, 4, 4000);
  CHECK(c.steps == 2);
  CHECK(c.critical_path_bytes == 8000);
  CHECK(c.bytes_sent_per_rank == 12000);
  CHECK(c.predict_s(0.002, 0) == Approx(0.004));
}

TEST_CASE("tree all_reduce: twice the depth of the binomial tree", "[cost]") {
  const Cost eight = all_reduce_cost(Algorithm::tree, 8, 400);
  CHECK(eight.steps == 6);  // 0 -> 4 -> 6 -> 7 and back
  CHECK(eight.critical_path_bytes == 6 * 400);
  CHECK(eight.bytes_sent_per_rank == 3 * 400);  // rank 0: 4, 2, 1; rank 4: 0, then 6, 5
  const Cost five = all_reduce_cost(Algorithm::tree, 5, 400);
  CHECK(five.steps == 4);  // deepest is rank 3 = 0b11; rank 4 hangs off the root
  const Cost broadcast = collective_cost(CollectiveOp::broadcast, Algorithm::automatic, 5, 400);
  CHECK(broadcast.steps == 2);
  CHECK(broadcast.critical_path_bytes == 800);
  CHECK(broadcast.bytes_sent_per_rank == 3 * 400);  // the root sends to 4, 2 and 1
  const Cost reduce = collective_cost(CollectiveOp::reduce, Algorithm::tree, 8, 400);
  CHECK(reduce.steps == 3);
  CHECK(reduce.bytes_sent_per_rank == 400);
}

TEST_CASE("halving-doubling: 2 log2 P steps, 2(P-1)/P S, plus the fold", "[cost]") {
  // R = 8, C = 8: halves of 4, 2, 1 floats each way.
  const Cost pow2 = all_reduce_cost(Algorithm::halving_doubling, 8, 32);
  CHECK(pow2.steps == 6);
  CHECK(pow2.critical_path_bytes == 2 * (4 + 2 + 1) * 4);
  CHECK(pow2.bytes_sent_per_rank == 2.0 * 7 / 8 * 32);
  // R = 6: P = 4, E = 2. C = 12 in 4 blocks of 3: halves of 6 then 3 floats.
  const Cost six = all_reduce_cost(Algorithm::halving_doubling, 6, 48);
  CHECK(six.steps == 4 + 2);
  CHECK(six.critical_path_bytes == 2 * 48 + 2 * (6 + 3) * 4);
  CHECK(six.bytes_sent_per_rank == 2 * (6 + 3) * 4 + 48);  // rank 1: core, then unfold
  // Fewer floats than blocks: the one float (block 0) still makes all four hops,
  // 2 -> 0, 1 -> 0, then 0 -> 1, 0 -> 2; the empty blocks cost nothing.
  const Cost tiny = all_reduce_cost(Algorithm::halving_doubling, 4, 4);
  CHECK(tiny.steps == 4);
  CHECK(tiny.critical_path_bytes == 4 * 4);
}

TEST_CASE("recursive doubling: log2 P swaps of the whole buffer, plus the fold", "[cost]") {
  const Cost pow2 = all_reduce_cost(Algorithm::recursive_doubling, 8, 32);
  CHECK(pow2.steps == 3);
  CHECK(pow2.critical_path_bytes == 3 * 32);
  CHECK(pow2.bytes_sent_per_rank == 3 * 32);
  // R = 6: P = 4, E = 2: rank 1 takes rank 0's buffer, swaps twice, and hands it back.
  // Its first partner's swap left at once, so the fold costs one message time, not two.
  const Cost six = all_reduce_cost(Algorithm::recursive_doubling, 6, 48);
  CHECK(six.steps == 3);
  CHECK(six.critical_path_bytes == 3 * 48);
  CHECK(six.bytes_sent_per_rank == 3 * 48);
  CHECK(all_reduce_cost(Algorithm::recursive_doubling, 3, 48).steps == 2);
  CHECK(all_reduce_cost(Algorithm::recursive_doubling, 5, 48).steps == 3);
  // R = 7: the chain through two folded ranks (v = 1 waits for v = 0 and 2) takes four.
  CHECK(all_reduce_cost(Algorithm::recursive_doubling, 7, 48).steps == 4);
  // Half of halving-doubling's steps: faster for short messages on the nominal link,
  // slower for long ones, which it sends whole at every step.
  const auto predict = [](Algorithm a, size_t bytes) {
    return all_reduce_cost(a, 8, bytes).predict_s(kAutoAlphaS, kAutoBandwidthBps);
  };
  CHECK(predict(Algorithm::recursive_doubling, 4096) < predict(Algorithm::halving_doubling, 4096));
  CHECK(predict(Algorithm::recursive_doubling, 1 << 20) >
        predict(Algorithm::halving_doubling, 1 << 20));
}

TEST_CASE("row ops and barrier", "[cost]") {
  const size_t bytes = 4 * 100 * 4;  // R = 4 rows of 100 floats
  const Cost gather = collective_cost(CollectiveOp::gather, Algorithm::automatic, 4, bytes);
  CHECK(gather.steps == 1);
  CHECK(gather.critical_path_bytes == 400);
  CHECK(gather.bytes_sent_per_rank == 400);
  const Cost scatter = collective_cost(CollectiveOp::scatter, Algorithm::naive, 4, bytes);
  CHECK(scatter.bytes_sent_per_rank == 1200);
  const Cost all_gather = collective_cost(CollectiveOp::all_gather, Algorithm::ring, 4, bytes);
  CHECK(all_gather.steps == 3);
  CHECK(all_gather.bytes_sent_per_rank == 1200);
  CHECK(collective_cost(CollectiveOp::reduce_scatter, Algorithm::automatic, 4, bytes)
            .critical_path_bytes == 1200);
  CHECK(collective_cost(CollectiveOp::barrier, Algorithm::automatic, 5, 0).steps == 3);
  CHECK(collective_cost(CollectiveOp::barrier, Algorithm::automatic, 4, 0).steps == 2);
  const Cost one = collective_cost(CollectiveOp::all_reduce, Algorithm::ring, 1, 1 << 20);
  CHECK(one.steps == 0);
  CHECK(one.predict_s(1, 1) == 0);
}

TEST_CASE("automatic choice follows the cost model and depends on world and bytes only", "[cost]") {
  // Short messages: recursive doubling's log2 P steps, each with the whole buffer.
  CHECK(resolve_algorithm(CollectiveOp::all_reduce, Algorithm::automatic, 4, 4096) ==
        Algorithm::recursive_doubling);
  // Longer ones, on powers of two: halving-doubling has ring's bytes and fewer steps.
  CHECK(resolve_algorithm(CollectiveOp::all_reduce, Algorithm::automatic, 4, 1 << 20) ==
        Algorithm::halving_doubling);
  CHECK(resolve_algorithm(CollectiveOp::all_reduce, Algorithm::automatic, 8, 16 << 20) ==
        Algorithm::halving_doubling);
  // Unless ring's chunks are large enough to pipeline (8 MiB: two segments), which hides all
  // but one of its latencies.
  CHECK(resolve_algorithm(CollectiveOp::all_reduce, Algorithm::automatic, 8, 64 << 20) ==
        Algorithm::ring);
  // Five ranks: the fold costs 2S, so ring wins on large buffers. On small ones recursive
  // doubling's three message times beat the tree's four; on seven both take four, and the
  // tree wins the tie.
  CHECK(resolve_algorithm(CollectiveOp::all_reduce, Algorithm::automatic, 5, 64 << 20) ==
        Algorithm::ring);
  CHECK(resolve_algorithm(CollectiveOp::all_reduce, Algorithm::automatic, 5, 4096) ==
        Algorithm::recursive_doubling);
  CHECK(resolve_algorithm(CollectiveOp::all_reduce, Algorithm::automatic, 7, 4096) ==
        Algorithm::tree);
  // native resolves like auto (what runs where the backend has none).
  CHECK(resolve_algorithm(CollectiveOp::all_reduce, Algorithm::native, 5, 4096) ==
        Algorithm::recursive_doubling);
  CHECK(resolve_algorithm(CollectiveOp::broadcast, Algorithm::automatic, 5, 4096) ==
        Algorithm::tree);
  CHECK_THROWS_AS(collective_cost(CollectiveOp::broadcast, Algorithm::halving_doubling, 4, 64),
                  UsageError);
  // The chain broadcast: R-1 hops of the whole buffer, pipelined in segments over 4 MiB.
  const Cost chain = collective_cost(CollectiveOp::broadcast, Algorithm::ring, 5, 400);
  CHECK(chain.steps == 4);
  CHECK(chain.critical_path_bytes == 4 * 400);
  CHECK(chain.bytes_sent_per_rank == 400);
  const size_t big = 3 * kRingSegmentFloats * sizeof(float);
  // 3 segments: 4 latencies and (R-2+m) = 6 segment times, not 4 whole-buffer hops.
  const Cost piped = collective_cost(CollectiveOp::broadcast, Algorithm::ring, 5, big);
  CHECK(piped.predict_s(1e-3, 1e9) == Approx(4e-3 + 6 * (big / 3.0) / 1e9));
  CHECK_THROWS_AS(collective_cost(CollectiveOp::all_reduce, Algorithm::ring, 0, 64), UsageError);
  CHECK_THAT(cost_formula(CollectiveOp::all_reduce, Algorithm::ring),
             Catch::StartsWith("2(R-1) * (a + S/R/B)"));
}

TEST_CASE("the simulator's model clock agrees with the cost model, step for step", "[cost][sim]") {
  // A fresh cluster starts every rank at model time 0, and a collective charges no compute
  // to the model clock, so the last rank's model time after one collective is the length
  // of its critical path under the link model: exactly what collective_cost predicts.
  // 840 = lcm(1..8): every chunk and block is equally large.
  const double alpha = 50e-6, bandwidth = 1e9;
  for (int world = 2; world <= 8; ++world) {
    for (size_t count : {size_t(840), size_t(840 * 40)}) {
      struct Case {
        CollectiveOp op;
        Algorithm algorithm;
      };
      std::vector<Case> cases = {{CollectiveOp::all_reduce, Algorithm::naive},
                                 {CollectiveOp::all_reduce, Algorithm::ring},
                                 {CollectiveOp::all_reduce, Algorithm::tree},
                                 {CollectiveOp::all_reduce, Algorithm::halving_doubling},
                                 {CollectiveOp::broadcast, Algorithm::automatic},
                                 {CollectiveOp::reduce, Algorithm::automatic},
                                 {CollectiveOp::gather, Algorithm::automatic},
                                 {CollectiveOp::scatter, Algorithm::automatic},
                                 {CollectiveOp::all_gather, Algorithm::automatic},
                                 {CollectiveOp::reduce_scatter, Algorithm::automatic},
                                 {CollectiveOp::barrier, Algorithm::automatic}};
      for (const Case& c : cases) {
        const size_t bytes = count * sizeof(float);
        const double predicted =
            collective_cost(c.op, c.algorithm, world, bytes).predict_s(alpha, bandwidth);
        std::vector<double> model(world, -1);
        sim::ClusterOptions options{.nodes = world};
        options.network.link = {.latency_s = alpha, .bandwidth_Bps = bandwidth};
        sim::run_cluster(options, [&](Communicator& comm) {
          const size_t per_rank = count / world;  // rows of the (R, c) buffers
          std::vector<float> a(count), b(count);
          const CollectiveOptions o{.algorithm = c.algorithm};
          switch (c.op) {
            case CollectiveOp::all_reduce:
              all_reduce(comm, a, ReduceOp::SUM, o);
              break;
            case CollectiveOp::broadcast:
              broadcast(comm, a, 0, o);
              break;
            case CollectiveOp::reduce:
              reduce(comm, a, ReduceOp::SUM, 0, o);
              break;
            case CollectiveOp::gather:
              gather(comm, std::span(a).first(per_rank), b, 0, o);
              break;
            case CollectiveOp::scatter:
              scatter(comm, a, std::span(b).first(per_rank), 0, o);
              break;
            case CollectiveOp::all_gather:
              all_gather(comm, std::span(a).first(per_rank), b, o);
              break;
            case CollectiveOp::reduce_scatter:
              reduce_scatter(comm, a, std::span(b).first(per_rank), ReduceOp::SUM, o);
              break;
            case CollectiveOp::barrier:
              barrier(comm, o);
              break;
          }
          model[comm.rank()] = comm.model_s();
        });
        INFO("world " << world << ", " << count << " floats, " << to_string(c.op) << " "
                      << to_string(c.algorithm));
        CHECK(*std::max_element(model.begin(), model.end()) ==
              Approx(predicted).epsilon(1e-9).margin(1e-8));  // ns ticks
      }
    }
  }
}

TEST_CASE("a ring chunk over the segment size is pipelined, in the model clock as predicted",
          "[cost][sim][large]") {
  // Two ranks, chunks of 2 and 3 equal segments. With 1 ms the link stays busy (a segment
  // takes about 4 ms at 1 GB/s, so the segments behind the first cover the latency); with
  // 20 ms every step still waits a latency.
  for (int segments : {2, 3}) {
    const size_t count = 2 * segments * kRingSegmentFloats;  // 2 chunks of `segments` each
    const Cost cost =
        collective_cost(CollectiveOp::all_reduce, Algorithm::ring, 2, count * sizeof(float));
    REQUIRE(cost.segments == segments);
    for (double alpha : {0.001, 0.020}) {
      const double bandwidth = 1e9;
      const double b = kRingSegmentFloats * sizeof(float) / bandwidth;  // one segment
      const double expected = std::max(2 * segments * b + alpha, 2 * alpha + (1 + segments) * b);
      const double predicted = cost.predict_s(alpha, bandwidth);
      CHECK(predicted == Approx(expected).epsilon(1e-12));
      // Unpipelined, the same bytes would take 2 (alpha + segments b): more in both regimes.
      CHECK(predicted < 2 * (alpha + segments * b));
      std::vector<double> model(2, -1);
      sim::ClusterOptions options{.nodes = 2};
      options.network.link = {.latency_s = alpha, .bandwidth_Bps = bandwidth};
      sim::run_cluster(options, [&](Communicator& comm) {
        std::vector<float> a(count, 1.f);
        all_reduce(comm, a, ReduceOp::SUM, {.algorithm = Algorithm::ring});
        model[comm.rank()] = comm.model_s();
      });
      INFO(segments << " segments, latency " << alpha);
      CHECK(std::max(model[0], model[1]) == Approx(predicted).epsilon(1e-9).margin(1e-8));
    }
  }
}

TEST_CASE("on the switch topology the model clock agrees with predict_switch_s", "[cost][sim]") {
  // Naive all_reduce, gather and scatter pass R - 1 messages through one rank's port, one
  // after another; the ring gives every port one message at a time, as on the mesh.
  const double alpha = 50e-6, bandwidth = 1e9;
  const size_t count = 840 * 40;
  for (int world = 2; world <= 8; ++world) {
    const std::pair<CollectiveOp, Algorithm> cases[] = {
        {CollectiveOp::all_reduce, Algorithm::naive},
        {CollectiveOp::all_reduce, Algorithm::ring},
        {CollectiveOp::gather, Algorithm::automatic},
        {CollectiveOp::scatter, Algorithm::automatic}};
    for (const auto& [op_of_case, algorithm_of_case] : cases) {
      const CollectiveOp op = op_of_case;  // a lambda cannot capture a structured binding
      const Algorithm algorithm = algorithm_of_case;  // in C++20 as clang 14 reads it
      const Cost cost = collective_cost(op, algorithm, world, count * sizeof(float));
      std::vector<double> model(world, -1);
      sim::ClusterOptions options{.nodes = world};
      options.network.link = {.latency_s = alpha, .bandwidth_Bps = bandwidth};
      options.network.topology = sim::Topology::switch_;
      sim::run_cluster(options, [&](Communicator& comm) {
        const size_t per_rank = count / world;
        std::vector<float> a(count), b(count);
        const CollectiveOptions o{.algorithm = algorithm};
        if (op == CollectiveOp::all_reduce) all_reduce(comm, a, ReduceOp::SUM, o);
        if (op == CollectiveOp::gather) gather(comm, std::span(a).first(per_rank), b, 0, o);
        if (op == CollectiveOp::scatter) scatter(comm, a, std::span(b).first(per_rank), 0, o);
        model[comm.rank()] = comm.model_s();
      });
      INFO("world " << world << ", " << to_string(op) << " " << to_string(algorithm));
      CHECK(*std::max_element(model.begin(), model.end()) ==
            Approx(cost.predict_switch_s(alpha, bandwidth)).epsilon(1e-9).margin(1e-8));
      if (world > 2 && algorithm == Algorithm::naive)  // the mesh would be faster
        CHECK(cost.predict_switch_s(alpha, bandwidth) > cost.predict_s(alpha, bandwidth));
    }
  }
}
