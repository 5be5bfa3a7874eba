// Runs the GUI tests draw: the all_reduce demo's data through a real simulated all_reduce,
// and a 4-rank training with a straggler, their events as the window's snapshot takes them.
#pragma once

#include <vector>

#include "core/comm/collectives.h"
#include "core/data/dataset.h"
#include "core/events.h"
#include "core/train/trainer.h"
#include "gui/model/layout.h"
#include "sim/cluster.h"
#include "sim/run_spec.h"

namespace dsgd::test {

inline std::vector<Event> demo_events(int world, Algorithm algorithm, int elements) {
  EventBuffer buffer;
  sim::ClusterOptions options{.nodes = world};
  options.network.link = {.latency_s = 1e-3, .bandwidth_Bps = 1e8};
  options.events = &buffer;
  sim::run_cluster(options, [&](Communicator& comm) {
    std::vector<float> data(elements);
    for (int i = 0; i < elements; ++i)
      data[i] = gui::demo_value(comm.rank(), i);
    all_reduce(comm, data, ReduceOp::SUM, {.algorithm = algorithm});
  });
  return buffer.snapshot();
}

// 4 ranks on 1 ms, 1 Gbit/s links; rank 2 computes four times as long, and compute is slow
// enough (about 13 ms of model time a step) to outweigh the links.
inline sim::RunSpec straggler_run() {
  sim::RunSpec spec;
  spec.cluster.nodes = 4;
  spec.cluster.network.link = {.latency_s = 1e-3, .bandwidth_Bps = 125e6};
  spec.cluster.node.gflops = 0.005;
  spec.cluster.node_overrides[2] = spec.cluster.node;
  spec.cluster.node_overrides[2].straggler = 4;
  return spec;
}

// Trains `steps` steps of a small model on the straggler run, its events to `sink`.
inline void train_straggler(EventSink& sink, int64_t steps) {
  sim::ClusterOptions options = straggler_run().cluster;
  options.events = &sink;
  const Dataset data = load_dataset("synthetic");
  TrainConfig config;
  config.model = ModelSpec::parse("mlp:16");
  config.global_batch = 64;
  config.steps = steps;
  config.allreduce = Algorithm::ring;
  sim::run_cluster(options, [&](Communicator& comm) { train(comm, data, config); });
}

}  // namespace dsgd::test
