// collective_pairs (core/comm/collective_pairs.h) against what the algorithms do: every
// collective with every algorithm it offers, on R = 1..9 and 16 simulated nodes, sends over
// exactly the rank pairs it names, and a training run over exactly training_pairs: the
// ring's pairs only when its gradients use the ring.
#include <catch2/catch.hpp>
#include <algorithm>
#include <functional>
#include <vector>

#include "core/comm/collective_pairs.h"
#include "core/comm/collectives.h"
#include "core/data/dataset.h"
#include "core/errors.h"
#include "core/events.h"
#include "core/train/trainer.h"
#include "sim/cluster.h"

using namespace dsgd;

namespace {

constexpr CollectiveOp kOps[] = {CollectiveOp::broadcast,      CollectiveOp::reduce,
                                 CollectiveOp::all_reduce,     CollectiveOp::gather,
                                 CollectiveOp::scatter,        CollectiveOp::all_gather,
                                 CollectiveOp::reduce_scatter, CollectiveOp::barrier};
constexpr Algorithm kAlgorithms[] = {Algorithm::automatic,
                                     Algorithm::naive,
                                     Algorithm::ring,
                                     Algorithm::tree,
                                     Algorithm::halving_doubling,
                                     Algorithm::recursive_doubling};

// The pairs `fn`'s sends go over on `world` simulated nodes (each once, sorted).
std::vector<RankPair> pairs_sent(int world, const sim::NodeFunction& fn) {
  EventBuffer events;
  sim::run_cluster({.nodes = world, .events = &events}, fn);
  std::vector<RankPair> sent;
  for (const Event& e : events.snapshot())
    if (e.kind == EventKind::send_begin && e.peer != e.rank)
      merge_pairs(sent, {{std::min(e.rank, e.peer), std::max(e.rank, e.peer)}});
  return sent;
}

// `op` with `algorithm`: c = 3 floats per rank, from `root`.
void run_collective(Communicator& comm, CollectiveOp op, Algorithm algorithm, int root) {
  const size_t c = 3, rows = c * comm.size();
  std::vector<float> one(c, 1.0f), all(rows, 1.0f);
  const CollectiveOptions options{.algorithm = algorithm};
  switch (op) {
    case CollectiveOp::broadcast:
      return broadcast(comm, one, root, options);
    case CollectiveOp::reduce:
      return reduce(comm, one, ReduceOp::SUM, root, options);
    case CollectiveOp::all_reduce:
      return all_reduce(comm, one, ReduceOp::SUM, options);
    case CollectiveOp::gather:
      return gather(comm, one, all, root, options);
    case CollectiveOp::scatter:
      return scatter(comm, all, one, root, options);
    case CollectiveOp::all_gather:
      return all_gather(comm, one, all, options);
    case CollectiveOp::reduce_scatter:
      return reduce_scatter(comm, all, one, ReduceOp::SUM, options);
    case CollectiveOp::barrier:
      return barrier(comm, options);
  }
}

}  // namespace

TEST_CASE("every collective sends over exactly the rank pairs collective_pairs names",
          "[collectives][pairs][sim]") {
  for (int world : {1, 2, 3, 4, 5, 6, 7, 8, 9, 16})
    for (CollectiveOp op : kOps)
      for (Algorithm a : kAlgorithms) {
        try {
          resolve_algorithm(op, a, world, 12);
        } catch (const UsageError&) {
          continue;  // not one of op's
        }
        const int root = world - 1;  // the chain and the trees then wrap round
        INFO(to_string(op) << " " << to_string(a) << " on " << world);
        CHECK(pairs_sent(world, [&](Communicator& comm) { run_collective(comm, op, a, root); }) ==
              collective_pairs(op, a, world, 12, root));
      }
}

TEST_CASE("a training run talks over exactly training_pairs, with the ring over its pairs only",
          "[collectives][pairs][sim][train]") {
  const Dataset data = load_dataset("synthetic:train=256,test=64,features=8,classes=4");
  for (int world : {5, 8})
    for (Algorithm a : kAlgorithms) {
      TrainConfig config{.model = ModelSpec::parse("mlp:8"),
                         .global_batch = 64,
                         .steps = 2,
                         .allreduce = a,
                         .eval_every = 1};
      INFO(to_string(a) << " on " << world);
      const std::vector<RankPair> want = training_pairs(config, data, world);
      CHECK(pairs_sent(world, [&](Communicator& comm) { train(comm, data, config); }) == want);
      if (a == Algorithm::ring)
        CHECK(want == collective_pairs(CollectiveOp::all_reduce, Algorithm::ring, world, 0));
    }
}

TEST_CASE("a run with a compression hook talks over training_pairs only",
          "[collectives][pairs][sim][train][comm_hooks]") {
  const Dataset data = load_dataset("synthetic:train=256,test=64,features=8,classes=4");
  const int world = 6;
  for (const char* hook : {"fp16", "powersgd:1", "topk:0.1"}) {
    TrainConfig config{.model = ModelSpec::parse("mlp:16"),
                       .global_batch = 64,
                       .steps = 3,
                       .allreduce = Algorithm::tree,
                       .eval_every = 1};
    config.compress = CompressSpec::parse(hook);
    config.powersgd_start = 1;
    INFO(hook);
    const std::vector<RankPair> want = training_pairs(config, data, world);
    for (const RankPair& p :
         pairs_sent(world, [&](Communicator& comm) { train(comm, data, config); }))
      CHECK(std::find(want.begin(), want.end(), p) != want.end());
  }
}
