// The engine of `dsgd bench collective`: times one collective over a sweep of sizes on every
// rank of a run (simulated nodes or MPI ranks), checks every element of every result, and
// gives one row per size with the alpha-beta prediction and the baselines beside it.
// Not a launcher and not a command line: the caller builds the plan from its flags, runs
// run_collective_bench on each rank (cli/backend.h) and prints (collective_report.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/collective/loopback_baseline.h"
#include "core/comm/collectives.h"
#include "sim/network.h"

namespace dsgd::bench {

inline constexpr uint64_t kMaxBenchBytes = uint64_t(1) << 30;
inline constexpr double kRunWarmupS = 0.5;  // untimed iterations before the first size
inline constexpr uint64_t kBaselineFromBytes = uint64_t(1) << 20;  // the loop column from here
inline constexpr uint64_t kLoopBufferMax = uint64_t(64) << 20;     // each loopback flow's buffers

// The backend's own all_reduce (SUM, float32, in place) called directly, without the
// Communicator: MPI_Allreduce on MPI_COMM_WORLD for "mpi"; empty for "sim", which has none.
// `dsgd bench collective --backend mpi --algorithm native` times it beside dsgd's call.
using BareAllReduce = std::function<void(float* data, size_t count)>;
BareAllReduce bare_all_reduce(const std::string& backend);

// Everything a run needs, checked before any rank starts.
struct CollectivePlan {
  CollectiveOp op = CollectiveOp::all_reduce;
  Algorithm requested = Algorithm::automatic;
  ReduceOp reduce_op = ReduceOp::SUM;
  int root = 0;
  std::vector<uint64_t> sizes;  // size_sweep
  sim::LinkSpec link;
  int iters = 20, warmup = 5;
  std::string backend = "sim";             // as the report names it
  std::shared_ptr<LoopbackRing> loopback;  // sim: timed beside each iteration
  BareAllReduce bare;  // the backend's own all_reduce, timed beside dsgd's (MPI, native)
  // SimGrid: times are virtual (Communicator::model_s), the same in every iteration, so
  // there is no run warm-up; each row also says how long one iteration took to simulate.
  bool virtual_time = false;
  bool phantom = false;  // phantom payloads: sizes only, results not checked
  // The alpha-beta model holds (one latency per message); not on SimGrid's fat-tree, torus
  // and dragonfly, whose latency grows with a route's hops: no prediction there.
  bool predictable = true;
  bool lv08 = false;  // SimGrid's LV08 model (the predictions stay CM02's, dsgd's alpha-beta)
};

struct CollectiveRow {
  uint64_t bytes = 0, count = 0;
  Algorithm algorithm = Algorithm::automatic;
  double time_us = 0, algbw_GBps = 0, busbw_GBps = 0;
  std::optional<double> predicted_us, error_pct;
  std::optional<double> loopback_GBps, vs_loopback_pct;  // sim, from kBaselineFromBytes
  std::optional<double> bare_us, overhead_pct;           // --backend mpi --algorithm native
  std::optional<double> wall_s;  // virtual time: wall seconds to simulate one iteration
  uint64_t wrong = 0;
  bool checked = true;  // false with phantom payloads: `wrong` means nothing
};

// nccl-tests' busbw factors: what each rank's link carries relative to the buffer size.
double bus_factor(CollectiveOp op, int world);
// min_bytes, then each size `factor` times the previous (at least one float more), up to
// max_bytes; barrier has the one size 0.
std::vector<uint64_t> size_sweep(CollectiveOp op, uint64_t min_bytes, uint64_t max_bytes,
                                 double factor);
// Whether the link is ideal (no latency, unlimited bandwidth): no prediction then.
bool ideal(const sim::LinkSpec& link);

// What rank 0 hears of the sweep as it goes: the world once known, then each row.
struct SweepObserver {
  std::function<void(int world)> on_start;
  std::function<void(const CollectiveRow& row)> on_row;
};

// The node function: every rank runs the same sweep. R = world size. Per size: warm-up and
// timed iterations, each started at one agreed instant on every rank and followed by a
// check of every element; the time of a size is the median of the timed iterations on each
// rank, then the maximum over ranks (the slowest rank decides when a collective is done).
// With plan.virtual_time the clock is the model's and the first size has no warm-up; with
// plan.phantom the buffers are shared and unchecked, and only the bench's own messages (the
// start time, the measurements) carry their floats.
// algbw = bytes / time, busbw = algbw * bus_factor. Only rank 0 calls `observer`.
// UsageError when plan.root is not a rank of the world.
void run_collective_bench(Communicator& comm, const CollectivePlan& plan,
                          const SweepObserver& observer);

}  // namespace dsgd::bench
