// Collectives on simulated nodes, beyond what every backend must do (that is the
// conformance suite, tests/conformance/, run by test_conformance.cpp): names, where
// Algorithm::native goes, the event stream, and model time under latency. Inputs are the
// suite's exact ones. R = world size.
#include <algorithm>
#include <catch2/catch.hpp>
#include <vector>

#include "core/comm/collectives.h"
#include "core/comm/cost_model.h"
#include "core/errors.h"
#include "sim/cluster.h"
#include "tests/conformance/exact_values.h"

using namespace dsgd;
using conformance::ExpectedReduction;
using conformance::label;
using conformance::labels;
using conformance::small_values;

TEST_CASE("algorithm and collective names parse, unknown ones are refused", "[collectives]") {
  CHECK(parse_algorithm("ring") == Algorithm::ring);
  CHECK(parse_algorithm("halving_doubling") == Algorithm::halving_doubling);
  CHECK(parse_algorithm("tree") == Algorithm::tree);
  CHECK(parse_algorithm("recursive_doubling") == Algorithm::recursive_doubling);
  CHECK_THROWS_WITH(parse_algorithm("fast"),
                    Catch::Contains("auto, naive, ring, tree, halving_doubling, "
                                    "recursive_doubling or native"));
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
      std::vector<float> data = small_values(r, 10);
      all_reduce(comm, data, ReduceOp::SUM, {.algorithm = Algorithm::native});
      for (size_t i = 0; i < 10; ++i)
        wrong[r] += data[i] != ExpectedReduction(ReduceOp::SUM, 3)(i);
      std::vector<float> rows(6);
      all_gather(comm, labels(r, 2), rows, {.algorithm = Algorithm::native});
      for (size_t j = 0; j < 6; ++j)
        wrong[r] += rows[j] != label(static_cast<int>(j / 2), j % 2);
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
    for (Algorithm algo : kAllReduceAlgorithms) {
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
          std::vector<float> data = small_values(comm.rank(), n);
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
