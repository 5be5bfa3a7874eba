// Collectives over the simulated transport. Inputs are small rank-dependent integers, so
// every reduction is exact in float whatever the order: expectations are exact.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "core/comm/collectives.h"
#include "core/errors.h"
#include "sim/cluster.h"

using namespace dsgd;

namespace {

// Value of element i on rank r: small integers, distinct per rank and element.
float input(int r, size_t i) {
  return static_cast<float>(((r + 1) * 7 + static_cast<int>(i % 13)) % 11 - 5);
}

float expected(ReduceOp op, int world, size_t i) {
  float acc = input(0, i);
  for (int r = 1; r < world; ++r) {
    const float v = input(r, i);
    switch (op) {
      case ReduceOp::SUM:
      case ReduceOp::AVG:
        acc += v;
        break;
      case ReduceOp::MAX:
        acc = std::max(acc, v);
        break;
      case ReduceOp::MIN:
        acc = std::min(acc, v);
        break;
      case ReduceOp::PROD:
        acc *= v;
        break;
    }
  }
  return op == ReduceOp::AVG ? acc / static_cast<float>(world) : acc;
}

std::vector<size_t> sizes_for(int world) {
  return {0,
          1,
          static_cast<size_t>(std::max(world - 1, 0)),
          static_cast<size_t>(world),
          static_cast<size_t>(world + 1),
          1000};
}

}  // namespace

TEST_CASE("all_reduce: every algorithm, op, rank count 1..9 and size", "[collectives]") {
  for (int world = 1; world <= 9; ++world) {
    for (Algorithm algo : {Algorithm::naive, Algorithm::ring, Algorithm::automatic}) {
      std::vector<int> wrong(world, 0);
      sim::run_cluster({.nodes = world}, [&](Communicator& comm) {
        for (ReduceOp op :
             {ReduceOp::SUM, ReduceOp::AVG, ReduceOp::MAX, ReduceOp::MIN, ReduceOp::PROD}) {
          for (size_t n : sizes_for(world)) {
            std::vector<float> data(n);
            for (size_t i = 0; i < n; ++i)
              data[i] = input(comm.rank(), i);
            all_reduce(comm, data, op, {.algorithm = algo});
            for (size_t i = 0; i < n; ++i) {
              const float want = expected(op, world, i);
              // AVG divides once: exact to one rounding of the exact quotient.
              const bool ok = op == ReduceOp::AVG
                                  ? std::abs(data[i] - want) <= 1e-6f * (1 + std::abs(want))
                                  : data[i] == want;
              if (!ok) ++wrong[comm.rank()];
            }
          }
        }
      });
      INFO("world " << world << " algorithm " << to_string(algo));
      for (int r = 0; r < world; ++r)
        CHECK(wrong[r] == 0);
    }
  }
}

TEST_CASE("all_reduce of a large buffer: ring and naive agree bit for bit across ranks",
          "[collectives]") {
  const size_t n = 1000003;
  for (Algorithm algo : {Algorithm::naive, Algorithm::ring}) {
    std::vector<std::vector<float>> results(5);
    sim::run_cluster({.nodes = 5}, [&](Communicator& comm) {
      std::vector<float> data(n);
      for (size_t i = 0; i < n; ++i)
        data[i] = input(comm.rank(), i);
      all_reduce(comm, data, ReduceOp::SUM, {.algorithm = algo});
      results[comm.rank()] = std::move(data);
    });
    size_t wrong = 0;
    for (size_t i = 0; i < n; ++i)
      wrong += results[0][i] != expected(ReduceOp::SUM, 5, i);
    CHECK(wrong == 0);
    for (int r = 1; r < 5; ++r)
      CHECK(results[r] == results[0]);
  }
}

TEST_CASE("broadcast and reduce from every root", "[collectives]") {
  for (int world : {1, 2, 3, 5, 8}) {
    int wrong = 0;
    std::mutex m;
    sim::run_cluster({.nodes = world}, [&](Communicator& comm) {
      for (int root = 0; root < world; ++root) {
        std::vector<float> data(world + 1);
        for (size_t i = 0; i < data.size(); ++i)
          data[i] = input(comm.rank(), i);
        broadcast(comm, data, root);
        int local = 0;
        for (size_t i = 0; i < data.size(); ++i)
          local += data[i] != input(root, i);
        for (size_t i = 0; i < data.size(); ++i)
          data[i] = input(comm.rank(), i);
        reduce(comm, data, ReduceOp::SUM, root);
        for (size_t i = 0; i < data.size(); ++i) {
          const float want = comm.rank() == root ? expected(ReduceOp::SUM, world, i)
                                                 : input(comm.rank(), i);  // untouched
          local += data[i] != want;
        }
        barrier(comm);
        std::lock_guard lock(m);
        wrong += local;
      }
    });
    INFO("world " << world);
    CHECK(wrong == 0);
  }
}

TEST_CASE("collectives reject a root outside the world", "[collectives]") {
  REQUIRE_THROWS_AS(sim::run_cluster({.nodes = 2},
                                     [](Communicator& comm) {
                                       std::vector<float> v(1);
                                       broadcast(comm, v, 2);
                                     }),
                    UsageError);
  CHECK(parse_algorithm("ring") == Algorithm::ring);
  CHECK_THROWS_WITH(parse_algorithm("fast"), Catch::Contains("naive, ring"));
}
