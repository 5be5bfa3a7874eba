// Collectives over the simulated transport. Inputs are small rank-dependent integers, so
// every reduction is exact in float whatever the order: expectations are exact (AVG: one
// rounding of the exact quotient). R = world size, c = elements per rank.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/comm/chunks.h"
#include "core/comm/collectives.h"
#include "core/comm/cost_model.h"
#include "core/errors.h"
#include "sim/cluster.h"

using namespace dsgd;
using namespace std::chrono_literals;

namespace {

constexpr ReduceOp kOps[] = {ReduceOp::SUM, ReduceOp::AVG, ReduceOp::MAX, ReduceOp::MIN,
                             ReduceOp::PROD};
constexpr Algorithm kAllReduceAlgorithms[] = {Algorithm::naive,     Algorithm::ring,
                                              Algorithm::tree,      Algorithm::halving_doubling,
                                              Algorithm::automatic, Algorithm::native};

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

bool close_enough(ReduceOp op, float got, float want) {
  return op == ReduceOp::AVG ? std::abs(got - want) <= 1e-6f * (1 + std::abs(want)) : got == want;
}

std::vector<float> inputs(int r, size_t n, size_t first = 0) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = input(r, first + i);
  return v;
}

std::vector<size_t> sizes_for(int world) {
  return {0,
          1,
          static_cast<size_t>(std::max(world - 1, 0)),
          static_cast<size_t>(world),
          static_cast<size_t>(world + 1),
          1000};
}

// Failures counted per rank (each rank's thread writes only its own slot).
struct Tally {
  explicit Tally(int world) : wrong(world, 0), differs(world, 0) {}
  std::vector<long> wrong;    // elements not equal to the exact expectation
  std::vector<long> differs;  // results whose bits differ from rank 0's
};

// Results shared between ranks to compare bits; rank 0 publishes, the others compare
// after a barrier.
class BitCompare {
 public:
  explicit BitCompare(int world) : results_(world) {}
  // Every rank calls it with its result; returns 1 if it differs from rank 0's.
  long check(Communicator& comm, std::span<const float> mine) {
    results_[comm.rank()].assign(mine.begin(), mine.end());
    barrier(comm);
    const auto& ref = results_[0];
    const long d = ref.size() != mine.size() ||
                   (!mine.empty() && std::memcmp(ref.data(), mine.data(), mine.size_bytes()) != 0);
    barrier(comm);  // nobody overwrites its slot while another still compares
    return d;
  }

 private:
  std::vector<std::vector<float>> results_;
};

}  // namespace

TEST_CASE("all_reduce: every algorithm, op, rank count 1..9 and size; same bits everywhere",
          "[collectives]") {
  for (int world = 1; world <= 9; ++world) {
    Tally tally(world);
    BitCompare bits(world);
    sim::run_cluster({.nodes = world}, [&](Communicator& comm) {
      const int r = comm.rank();
      for (Algorithm algo : kAllReduceAlgorithms)
        for (ReduceOp op : kOps)
          for (size_t n : sizes_for(world)) {
            std::vector<float> data = inputs(r, n);
            all_reduce(comm, data, op, {.algorithm = algo});
            for (size_t i = 0; i < n; ++i)
              tally.wrong[r] += !close_enough(op, data[i], expected(op, world, i));
            tally.differs[r] += bits.check(comm, data);
          }
    });
    INFO("world " << world);
    for (int r = 0; r < world; ++r) {
      CHECK(tally.wrong[r] == 0);
      CHECK(tally.differs[r] == 0);
    }
  }
}

TEST_CASE("every other op, every rank count 1..9, size and root", "[collectives]") {
  for (int world = 1; world <= 9; ++world) {
    Tally tally(world);
    sim::run_cluster({.nodes = world}, [&](Communicator& comm) {
      const int r = comm.rank();
      long& wrong = tally.wrong[r];
      for (size_t c : sizes_for(world)) {
        // all_gather: row i is rank i's input.
        std::vector<float> rows(world * c, -100.0f);
        all_gather(comm, inputs(r, c), rows);
        for (int i = 0; i < world; ++i)
          for (size_t k = 0; k < c; ++k)
            wrong += rows[i * c + k] != input(i, k);
        // reduce_scatter: rank r gets row r of the reduction of (R, c) buffers.
        for (ReduceOp op : kOps) {
          std::vector<float> mine(c, -100.0f);
          reduce_scatter(comm, inputs(r, world * c), mine, op);
          for (size_t k = 0; k < c; ++k)
            wrong += !close_enough(op, mine[k], expected(op, world, r * c + k));
        }
        for (int root = 0; root < world; ++root) {
          std::vector<float> data = r == root ? inputs(r, c) : std::vector<float>(c, -100.0f);
          broadcast(comm, data, root);
          for (size_t k = 0; k < c; ++k)
            wrong += data[k] != input(root, k);
          for (ReduceOp op : {ReduceOp::SUM, ReduceOp::AVG, ReduceOp::PROD}) {
            data = inputs(r, c);
            reduce(comm, data, op, root);
            for (size_t k = 0; k < c; ++k)  // non-roots keep their input
              wrong += !close_enough(op, data[k], r == root ? expected(op, world, k) : input(r, k));
          }
          std::vector<float> gathered(r == root ? world * c : 0, -100.0f);
          gather(comm, inputs(r, c), gathered, root);
          for (size_t j = 0; j < gathered.size(); ++j)
            wrong += gathered[j] != input(static_cast<int>(j / c), j % c);
          // scatter: row i of the root's (R, c) buffer goes to rank i.
          std::vector<float> table;
          if (r == root)
            for (int i = 0; i < world; ++i) {
              std::vector<float> row = inputs(i, c);
              table.insert(table.end(), row.begin(), row.end());
            }
          std::vector<float> piece(c, -100.0f);
          scatter(comm, table, piece, root);
          for (size_t k = 0; k < c; ++k)
            wrong += piece[k] != input(r, k);
        }
        barrier(comm);
      }
    });
    INFO("world " << world);
    for (int r = 0; r < world; ++r)
      CHECK(tally.wrong[r] == 0);
  }
}

TEST_CASE("a million-element buffer: every op and all_reduce algorithm, exact, same bits",
          "[collectives][large]") {
  const size_t n = 1000003;
  for (int world : {3, 4, 8}) {
    Tally tally(world);
    BitCompare bits(world);
    sim::run_cluster({.nodes = world}, [&](Communicator& comm) {
      const int r = comm.rank();
      for (Algorithm algo :
           {Algorithm::naive, Algorithm::ring, Algorithm::tree, Algorithm::halving_doubling}) {
        const ReduceOp op = algo == Algorithm::ring ? ReduceOp::AVG : ReduceOp::SUM;
        std::vector<float> data = inputs(r, n);
        all_reduce(comm, data, op, {.algorithm = algo});
        for (size_t i = 0; i < n; ++i)
          tally.wrong[r] += !close_enough(op, data[i], expected(op, world, i));
        tally.differs[r] += bits.check(comm, data);
      }
      // The row ops with c = n / R elements per rank (R rows of a large buffer).
      const size_t c = n / world;
      std::vector<float> rows(world * c);
      all_gather(comm, inputs(r, c), rows);
      for (size_t j = 0; j < rows.size(); ++j)
        tally.wrong[r] += rows[j] != input(static_cast<int>(j / c), j % c);
      std::vector<float> mine(c);
      reduce_scatter(comm, inputs(r, world * c), mine, ReduceOp::MAX);
      for (size_t k = 0; k < c; ++k)
        tally.wrong[r] += mine[k] != expected(ReduceOp::MAX, world, r * c + k);
      std::vector<float> data = inputs(r, n);
      broadcast(comm, data, world - 1);
      for (size_t i = 0; i < n; ++i)
        tally.wrong[r] += data[i] != input(world - 1, i);
    });
    INFO("world " << world);
    for (int r = 0; r < world; ++r) {
      CHECK(tally.wrong[r] == 0);
      CHECK(tally.differs[r] == 0);
    }
  }
}

TEST_CASE("ring all_reduce in segments: chunks over the segment size are pipelined, exactly",
          "[collectives][large]") {
  // Chunks of kRingSegmentFloats + 1 and + 2 elements: two segments each, of unequal size,
  // and chunks that differ by one element between ranks.
  for (int world : {2, 3}) {
    const size_t n = world * (kRingSegmentFloats + 1) + 1;
    const size_t chunk = (n + world - 1) / world;
    INFO("world " << world << ": " << ring_segments(chunk) << " segments a chunk");
    CHECK(ring_segments(chunk) >= 2);
    Tally tally(world);
    BitCompare bits(world);
    sim::run_cluster({.nodes = world}, [&](Communicator& comm) {
      const int r = comm.rank();
      for (ReduceOp op : {ReduceOp::SUM, ReduceOp::AVG}) {
        std::vector<float> data = inputs(r, n);
        all_reduce(comm, data, op, {.algorithm = Algorithm::ring});
        for (size_t i = 0; i < n; ++i)
          tally.wrong[r] += !close_enough(op, data[i], expected(op, world, i));
        tally.differs[r] += bits.check(comm, data);
      }
    });
    for (int r = 0; r < world; ++r) {
      CHECK(tally.wrong[r] == 0);
      CHECK(tally.differs[r] == 0);
    }
  }
}

TEST_CASE("wrong buffer sizes are UsageErrors that name both sizes", "[collectives]") {
  auto fails_with = [](auto fn) {
    std::string what;
    try {
      sim::run_cluster({.nodes = 3}, fn);
    } catch (const UsageError& e) {
      what = e.what();
    }
    return what;
  };
  // Every rank makes the same mistake, so each fails before sending anything.
  CHECK_THAT(fails_with([](Communicator& comm) {
               std::vector<float> send(4), recv(10);
               all_gather(comm, send, recv);
             }),
             Catch::Contains("holds 10 floats") && Catch::Contains("3 ranks x 4 floats") &&
                 Catch::Contains("= 12"));
  CHECK_THAT(fails_with([](Communicator& comm) {
               std::vector<float> send(7), recv(2);
               reduce_scatter(comm, send, recv);
             }),
             Catch::Contains("holds 7 floats") && Catch::Contains("= 6"));
  CHECK_THAT(fails_with([](Communicator& comm) {
               std::vector<float> send(2), recv(comm.rank() == 0 ? 5 : 0);
               gather(comm, send, recv, 0);
             }),
             Catch::Contains("gather: rank 0's recv holds 5 floats") && Catch::Contains("= 6"));
  CHECK_THAT(fails_with([](Communicator& comm) {
               std::vector<float> send(comm.rank() == 1 ? 9 : 0), recv(2);
               scatter(comm, send, recv, 1);
             }),
             Catch::Contains("scatter: rank 1's send holds 9 floats") && Catch::Contains("= 6"));
  // Off the root, the (R, c) buffer may be empty or full size, nothing else.
  CHECK_THAT(fails_with([](Communicator& comm) {
               std::vector<float> send(2), recv(comm.rank() == 0 ? 6 : 1);
               gather(comm, send, recv, 0);
             }),
             Catch::Contains("holds 1 floats") && Catch::Contains("or none"));
}

TEST_CASE("collectives reject a bad root and algorithms an op lacks", "[collectives]") {
  REQUIRE_THROWS_AS(sim::run_cluster({.nodes = 2},
                                     [](Communicator& comm) {
                                       std::vector<float> v(1);
                                       broadcast(comm, v, 2);
                                     }),
                    UsageError);
  REQUIRE_THROWS_WITH(sim::run_cluster({.nodes = 2},
                                       [](Communicator& comm) {
                                         std::vector<float> v(1), all(2);
                                         all_gather(comm, v, all, {.algorithm = Algorithm::tree});
                                       }),
                      Catch::Contains("all_gather: algorithm tree is for all_reduce"));
  CHECK(parse_algorithm("ring") == Algorithm::ring);
  CHECK(parse_algorithm("halving_doubling") == Algorithm::halving_doubling);
  CHECK(parse_algorithm("tree") == Algorithm::tree);
  CHECK_THROWS_WITH(parse_algorithm("fast"), Catch::Contains("naive, ring, tree"));
  for (CollectiveOp op : {CollectiveOp::broadcast, CollectiveOp::reduce, CollectiveOp::all_reduce,
                          CollectiveOp::gather, CollectiveOp::scatter, CollectiveOp::all_gather,
                          CollectiveOp::reduce_scatter, CollectiveOp::barrier})
    CHECK(parse_collective_op(to_string(op)) == op);
  CHECK_THROWS_AS(parse_collective_op("alltoall"), UsageError);
}

namespace {

// A communicator that forwards point-to-point calls to a simulated node and claims its own
// native collectives, to show where Algorithm::native goes.
class NativeSpy final : public Communicator {
 public:
  NativeSpy(Communicator& inner, bool has_native) : inner_(inner), has_native_(has_native) {}
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  const char* backend() const override { return "spy"; }
  bool native_all_reduce(std::span<float> data, ReduceOp op) override {
    ++calls;
    if (!has_native_) return false;
    all_reduce_naive(*this, data, op);
    return true;
  }
  bool native_all_gather(std::span<const float> send, std::span<float> recv) override {
    ++calls;
    if (!has_native_) return false;
    all_gather_ring(*this, send, recv);
    return true;
  }
  int calls = 0;

 protected:
  Request do_isend(std::span<const float> data, int dst, int tag) override {
    return inner_.isend(data, dst, tag);
  }
  Request do_irecv(std::span<float> data, int src, int tag) override {
    return inner_.irecv(data, src, tag);
  }

 private:
  Communicator& inner_;
  bool has_native_;
};

}  // namespace

TEST_CASE("Algorithm::native uses the backend's own, or falls back to dsgd's", "[collectives]") {
  for (bool has_native : {true, false}) {
    std::vector<int> calls(3), wrong(3);
    sim::run_cluster({.nodes = 3}, [&](Communicator& node) {
      NativeSpy comm(node, has_native);
      const int r = comm.rank();
      std::vector<float> data = inputs(r, 10);
      all_reduce(comm, data, ReduceOp::SUM, {.algorithm = Algorithm::native});
      for (size_t i = 0; i < 10; ++i)
        wrong[r] += data[i] != expected(ReduceOp::SUM, 3, i);
      std::vector<float> rows(6);
      all_gather(comm, inputs(r, 2), rows, {.algorithm = Algorithm::native});
      for (size_t j = 0; j < 6; ++j)
        wrong[r] += rows[j] != input(static_cast<int>(j / 2), j % 2);
      all_reduce(comm, data, ReduceOp::SUM, {.algorithm = Algorithm::ring});  // not native
      calls[r] = comm.calls;
    });
    INFO("has_native " << has_native);
    for (int r = 0; r < 3; ++r) {
      CHECK(calls[r] == 2);
      CHECK(wrong[r] == 0);
    }
  }
}

TEST_CASE("each collective is one begin/end pair in the event stream, with its bytes",
          "[collectives][events]") {
  EventBuffer events;
  sim::run_cluster({.nodes = 4, .events = &events}, [](Communicator& comm) {
    std::vector<float> send(3), rows(12);
    all_gather(comm, send, rows);
    reduce_scatter(comm, rows, send);
    all_reduce(comm, rows, ReduceOp::SUM, {.algorithm = Algorithm::halving_doubling});
  });
  int begins = 0, ends = 0;
  for (const Event& e : events.snapshot()) {
    if (e.kind != EventKind::collective_begin && e.kind != EventKind::collective_end) continue;
    (e.kind == EventKind::collective_begin ? begins : ends) += 1;
    const std::string op = e.op;
    CHECK((op == "all_gather" || op == "reduce_scatter" || op == "all_reduce"));
    CHECK(e.bytes == 48);  // the (R, c) buffer: 4 x 3 floats
  }
  // No nested collective reports itself: three begin/end pairs on each of four ranks.
  CHECK(begins == 12);
  CHECK(ends == 12);
}

TEST_CASE("with 2 ms of latency each all_reduce takes its predicted steps",
          "[collectives][latency]") {
  // Model time must equal the cost model exactly; wall time is checked only from below.
  // The link model holds every message for its latency, and in each of these algorithms
  // some rank's own first send starts a chain of `steps` messages that ends at that rank,
  // so the slowest rank measures at least steps * alpha, less how early its sends are
  // stamped: the simulator stamps a send as if the thread had woken on time for its last
  // message, up to 0.5 ms early (scheduler lag on few cores is not part of the model).
  // How close wall time comes to the model is measured by bench/bench_fidelity, not here.
  const double alpha = 0.002, max_lag_s = 0.0005;
  const int iterations = 3;
  for (int world : {4, 5}) {
    for (Algorithm algo :
         {Algorithm::naive, Algorithm::ring, Algorithm::tree, Algorithm::halving_doubling}) {
      const size_t n = 16;
      const double predicted =
          collective_cost(CollectiveOp::all_reduce, algo, world, n * sizeof(float))
              .predict_s(alpha, 0);
      std::vector<std::vector<double>> seconds(iterations, std::vector<double>(world));
      std::vector<std::vector<double>> model_begin(iterations, std::vector<double>(world));
      std::vector<std::vector<double>> model_end(iterations, std::vector<double>(world));
      sim::ClusterOptions options{.nodes = world};
      options.network.link.latency_s = alpha;
      // A fresh cluster per iteration: every rank starts at model time 0, and after the
      // (symmetric) barrier all stand at the same model time.
      for (int it = 0; it < iterations; ++it) {
        sim::run_cluster(options, [&](Communicator& comm) {
          std::vector<float> data = inputs(comm.rank(), n);
          barrier(comm);
          model_begin[it][comm.rank()] = comm.model_s();
          const auto t0 = std::chrono::steady_clock::now();
          all_reduce(comm, data, ReduceOp::SUM, {.algorithm = algo});
          const auto t1 = std::chrono::steady_clock::now();
          model_end[it][comm.rank()] = comm.model_s();
          seconds[it][comm.rank()] = std::chrono::duration<double>(t1 - t0).count();
        });
      }
      INFO("world " << world << " " << to_string(algo) << ": predicted " << predicted * 1e3
                    << " ms");
      for (int it = 0; it < iterations; ++it) {
        const double slowest = *std::max_element(seconds[it].begin(), seconds[it].end());
        const auto [first, last] =
            std::minmax_element(model_begin[it].begin(), model_begin[it].end());
        CHECK(*first == *last);
        const double model = *std::max_element(model_end[it].begin(), model_end[it].end()) - *first;
        INFO("iteration " << it << ": wall " << slowest * 1e3 << " ms, model " << model * 1e3
                          << " ms");
        CHECK(slowest >= predicted - max_lag_s);
        CHECK(model == Approx(predicted).epsilon(1e-6));
      }
    }
  }
}
