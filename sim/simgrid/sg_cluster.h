// run_simgrid: the node function on every rank of a cluster simulated in virtual time by
// SimGrid (Debian's libsimgrid-dev): each rank an S4U actor on a host of the platform
// (sg_platform.h), its messages simulated transfers of their size (sg_fabric.h). Compute
// costs virtual time (flops at each node's gflops, or the CPU time measured), and nothing
// waits for the wall clock, so a run of 1,000 ranks takes as long as its computing and
// bookkeeping, not as long as its model time. One simulation per process (SimGrid's engine
// cannot start twice). The network model is SimGrid's CM02 without its corrections (no
// cross traffic, no TCP window bound), which agrees with dsgd's alpha-beta model wherever
// no link carries two pairs' messages at once, and shares a link's bandwidth fairly among
// the pairs that cross it where several do.
#pragma once

#include <memory>
#include <vector>

#include "sim/cluster.h"
#include "sim/simgrid/sg_communicator.h"

namespace dsgd::sim::sg {

struct SgOptions {
  // Phantom: messages carry only their size; receive buffers are left as they are.
  bool phantom = false;
  ComputeModel compute = ComputeModel::flops;
  // SimGrid's LV08 network model with its corrections (latency x 13.01, bandwidth x 0.97,
  // cross traffic, a TCP window bound) instead of CM02 without them; the latency is then
  // the links', so each message pays it inside its transfer (sg_platform.h).
  bool lv08 = false;
  // Step mode (`dsgd lesson N --step`): every message waits for this gate's step().
  StepGate* step = nullptr;
};

struct SgResult {
  double simulated_s = 0;      // the clock when the last rank finished
  std::vector<LinkUse> links;  // the bytes each link carried, busiest first
};

// Runs fn(comm) on options.nodes ranks and returns when all are done. The first exception
// a rank throws ends the run (the others are killed) and is rethrown here; DeadlockError when
// every rank left waits for good, naming what each waits for. options.timeout is not used
// (no wall-clock deadlines); events, when set, get every rank's events with model_s in
// virtual time. UsageError for what the backend does not model (check_supported) and for a
// second run in the same process.
SgResult run_simgrid(const ClusterOptions& options, const NodeFunction& fn,
                     const SgOptions& sg = {});

// The rounds of an elastic run (sim/elastic.h) in one SimGrid simulation: the platform of
// `first`'s nodes is built once, and each round runs its ranks on the hosts of its members'
// nodes, from the virtual time the round before it ended (each round's engine run lasts
// until the last of its messages has landed). UsageError as run_simgrid.
class SgRounds {
 public:
  SgRounds(const ClusterOptions& first, const SgOptions& sg);
  ~SgRounds();
  SgRounds(const SgRounds&) = delete;
  SgRounds& operator=(const SgRounds&) = delete;

  // Runs fn on the ranks of `round` (its faults, events, on_crash), rank r on the host of
  // node members[r]; as run_simgrid otherwise.
  SgResult run(const ClusterOptions& round, const std::vector<int>& members,
               const NodeFunction& fn);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dsgd::sim::sg
