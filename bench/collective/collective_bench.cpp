// The sweep of `dsgd bench collective` on one rank: the common start of every iteration, the
// run's warm-up, the timed iterations beside their baselines, and the row rank 0 makes of
// what every rank measured. R = world size.
#include "bench/collective/collective_bench.h"

#include <sys/prctl.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <thread>

#include <fmt/format.h>

#include "bench/collective/bench_case.h"
#include "core/comm/cost_model.h"
#include "core/errors.h"
#ifdef DSGD_HAVE_MPI
#include <climits>

#include "core/mpi/mpi_check.h"
#endif

namespace dsgd::bench {
namespace {

constexpr double kStartMarginS = 1e-3;  // beyond the link latencies, for the transport
// In virtual time a lead costs nothing, and one latency per step of the broadcast would fall
// short on SimGrid (a route of many links, each a latency; LV08's factor of 13.01): 10 s,
// or more for latencies so long that a broadcast of 16-link routes at 13.01x might not fit.
constexpr double kVirtualLeadS = 10;
constexpr double kVirtualLatencyScale = 16 * 13.01;
constexpr double kSpinBeforeStartS = 2e-3;  // start_together yields, not sleeps, this last

// Starts every rank's next collective at the same instant of the run's common clock and
// returns it. A barrier alone does not: ranks leave it up to one latency apart when they
// entered it unevenly (after naive, rank 0 is a latency ahead), and the early ones would be
// charged the wait. Instead rank 0 names a start `lead_s` ahead once all have arrived, and
// each rank sleeps until then; a rank that hears of it late is charged the delay. In
// virtual time the same, on the model's clock: each rank's clock moves to the start.
// The steps of a binomial broadcast over `world` ranks, and one more.
double broadcast_steps(int world) {
  return std::bit_width(static_cast<unsigned>(world - 1)) + 1;
}

double start_together(Communicator& comm, double lead_s, bool virtual_time) {
  const Communicator::RealPayloads real(comm);  // the start time must arrive
  barrier(comm);
  std::array<float, 2> message{};  // a double, bit for bit
  const double now_s = virtual_time ? comm.model_s() : comm.wall_s();
  if (comm.rank() == 0) message = std::bit_cast<std::array<float, 2>>(now_s + lead_s);
  broadcast(comm, message, 0);
  const double start_s = std::bit_cast<double>(message);
  if (virtual_time) {
    comm.advance_model_to(start_s);
    return start_s;
  }
  // Yield until the start, sleeping only when it is further off: a thread woken from sleep
  // runs some 50 us late here, and a virtual CPU that went idle is slow to come back
  // (4 KiB on 4 nodes measured 180-200 us after a sleep, 145-150 us after yielding), which
  // would be charged to the collective. Yielding leaves the cores to whoever needs them.
  const double wait_s = start_s - kSpinBeforeStartS - comm.wall_s();
  if (wait_s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(wait_s));
  while (comm.wall_s() < start_s)
    std::this_thread::yield();
  return start_s;
}

// Before the first size: untimed iterations until kRunWarmupS have passed on rank 0, which
// tells the others each time whether to go on. A run's first collectives are slower: on
// the build machine (a VM), 4 KiB on 4 nodes takes 185-210 us for its first hundred or so
// iterations and about 100 us after that, and the idle cores waking slowly are the likely
// cause. The --warmup iterations of every size come after this.
void warm_up_run(Communicator& comm, BenchCase& bench, const CollectiveOptions& options,
                 double lead_s) {
  const double begin_s = comm.wall_s();
  for (std::array<float, 1> go{1}; go[0] != 0;) {
    bench.reset();
    start_together(comm, lead_s, false);
    bench.run(comm, options);
    bench.count_wrong();  // as a timed iteration does; a wrong result counts there
    go[0] = comm.rank() == 0 && comm.wall_s() - begin_s < kRunWarmupS ? 1 : 0;
    broadcast(comm, go, 0);
  }
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// One size: its bytes, and what each rank's link carries in it, on every loopback flow at
// once when the loopback baseline is timed beside it.
struct Size {
  uint64_t bytes = 0, loop_bytes = 0;
  bool paired_loop = false;
};

// One rank's timed iterations of one size.
struct Samples {
  std::vector<double> times, bare_times, ratios, loop_times;
  std::vector<double> wall_times;  // virtual time: the wall seconds each iteration took
  uint64_t wrong = 0;
};

// Gathered on rank 0 from every rank, per rank: median us, the wrong count split in two so
// that each half is exact in a float, bare median us, median paired ratio.
constexpr int kFields = 5;

// One rank's part of the sweep.
class SweepRank {
 public:
  SweepRank(Communicator& comm, const CollectivePlan& plan)
      : comm_(comm),
        plan_(plan),
        world_(comm.size()),
        rank_(comm.rank()),
        bench_(plan.op, plan.reduce_op, plan.root, world_, rank_),
        options_{.algorithm = plan.requested},
        // Enough for the start time to reach every rank: one latency per hop of the broadcast.
        lead_s_(plan.virtual_time
                    ? std::max(kVirtualLeadS,
                               broadcast_steps(world_) * plan.link.latency_s * kVirtualLatencyScale)
                    : kStartMarginS + broadcast_steps(world_) * plan.link.latency_s) {
    if (plan.phantom) bench_.share_buffers(comm);
  }

  // The size a row of `requested` bytes uses (whole floats, R equal rows where rows apply).
  Size resize(uint64_t requested) {
    Size s{.bytes = bench_.resize(requested)};
    s.loop_bytes = static_cast<uint64_t>(
        std::ceil(bus_factor(plan_.op, world_) * static_cast<double>(s.bytes)));
    s.paired_loop = plan_.loopback && s.bytes >= kBaselineFromBytes && s.loop_bytes > 0;
    return s;
  }
  void warm_up() { warm_up_run(comm_, bench_, options_, lead_s_); }
  double start() { return start_together(comm_, lead_s_, plan_.virtual_time); }
  double now() const { return plan_.virtual_time ? comm_.model_s() : comm_.wall_s(); }
  // Virtual time: the wall seconds since `since` until every rank's collective is done.
  // One thread simulates every rank, and the root of a broadcast returns before the others
  // have theirs: a barrier on rank 0's side waits for them. 0 in real time.
  double wall_until_all_done(double since) {
    if (!plan_.virtual_time) return 0;
    const Communicator::RealPayloads real(comm_);
    barrier(comm_);
    return comm_.wall_s() - since;
  }
  Samples time(const Size& size);
  // Every rank takes part; rank 0 returns the row.
  std::optional<CollectiveRow> gather_row(const Size& size, const Samples& samples);

 private:
  double time_loop(const Size& size);
  double time_bare();
  CollectiveRow make_row(const Size& size, const std::vector<float>& all) const;
  void add_loopback(CollectiveRow& row, const Size& size, const Samples& samples,
                    const std::vector<float>& all_iterations) const;

  Communicator& comm_;
  const CollectivePlan& plan_;
  const int world_, rank_;
  BenchCase bench_;
  const CollectiveOptions options_;
  const double lead_s_;
};

double SweepRank::time_loop(const Size& size) {
  // Between two barriers: the other ranks wait in the second, idle (not filling or
  // checking buffers), while rank 0's loopback threads have the cores.
  barrier(comm_);
  const double seconds =
      rank_ == 0 ? plan_.loopback->round(size.loop_bytes, std::min(size.bytes, kLoopBufferMax))
                 : 0.0;
  barrier(comm_);
  return seconds;
}

double SweepRank::time_bare() {
  // The same buffer as dsgd's, filled the same way just before: the two differ only in
  // the call, not in the memory (alignment, pages, cache) they work on.
  bench_.reset();
  const double start_s = start();
  plan_.bare(bench_.data().data(), bench_.count());
  return comm_.wall_s() - start_s;
}

Samples SweepRank::time(const Size& size) {
  Samples s;
  for (int it = 0; it < plan_.warmup + plan_.iters; ++it) {
    // With a baseline the two alternate which goes first, so both meet the same load.
    const bool baseline_first = it % 2 == 1;
    double bare_s = plan_.bare && baseline_first ? time_bare() : 0;
    double loop_s = size.paired_loop && baseline_first ? time_loop(size) : 0;
    bench_.reset();
    const double start_s = start();
    const double wall_start_s = comm_.wall_s();
    bench_.run(comm_, options_);
    const double end_s = now();
    const double wall_s = wall_until_all_done(wall_start_s);
    s.wrong += bench_.count_wrong();  // before a bare run reuses the buffer
    if (plan_.bare && !baseline_first) bare_s = time_bare();
    if (size.paired_loop && !baseline_first) loop_s = time_loop(size);
    if (it < plan_.warmup) continue;
    s.times.push_back(end_s - start_s);
    s.wall_times.push_back(wall_s);
    if (plan_.bare) {
      s.bare_times.push_back(bare_s);
      // Paired: the two ran back to back, so a slow spell of the machine hits both.
      if (bare_s > 0) s.ratios.push_back((end_s - start_s) / bare_s);
    }
    s.loop_times.push_back(loop_s);
  }
  return s;
}

std::optional<CollectiveRow> SweepRank::gather_row(const Size& size, const Samples& s) {
  const Communicator::RealPayloads real(comm_);  // the measurements must arrive
  // Each iteration's time on every rank, for rank 0 to pair with its loopback rounds.
  std::vector<float> iteration_us;
  if (size.paired_loop)
    for (double t : s.times)
      iteration_us.push_back(static_cast<float>(t * 1e6));
  std::vector<float> all_iterations(rank_ == 0 ? iteration_us.size() * world_ : 0);
  if (size.paired_loop) gather(comm_, iteration_us, all_iterations, 0);
  const float mine[kFields] = {
      static_cast<float>(median(s.times) * 1e6), static_cast<float>(s.wrong >> 20),
      static_cast<float>(s.wrong & 0xFFFFF), static_cast<float>(median(s.bare_times) * 1e6),
      static_cast<float>(median(s.ratios))};
  std::vector<float> all(rank_ == 0 ? kFields * world_ : 0);
  gather(comm_, mine, all, 0);
  if (rank_ != 0) return std::nullopt;
  CollectiveRow row = make_row(size, all);
  if (size.paired_loop) add_loopback(row, size, s, all_iterations);
  if (plan_.virtual_time) row.wall_s = median(s.wall_times);
  return row;
}

CollectiveRow SweepRank::make_row(const Size& size, const std::vector<float>& all) const {
  const uint64_t bytes = size.bytes;
  CollectiveRow row{.bytes = bytes,
                    .count = bytes / sizeof(float),
                    // native: the backend's own may run; predictions are for dsgd's fallback.
                    .algorithm = plan_.requested == Algorithm::native
                                     ? Algorithm::native
                                     : resolve_algorithm(plan_.op, plan_.requested, world_, bytes),
                    .checked = !plan_.phantom};
  double bare_us = 0, ratio_sum = 0;
  for (int r = 0; r < world_; ++r) {
    const float* f = &all[kFields * r];
    row.time_us = std::max<double>(row.time_us, f[0]);
    row.wrong += (static_cast<uint64_t>(f[1]) << 20) + static_cast<uint64_t>(f[2]);
    bare_us = std::max<double>(bare_us, f[3]);
    ratio_sum += f[4];
  }
  if (plan_.bare && bare_us > 0) {
    row.bare_us = bare_us;
    row.overhead_pct = (ratio_sum / world_ - 1) * 100;
  }
  if (row.time_us > 0) {
    row.algbw_GBps = bytes / row.time_us / 1e3;
    row.busbw_GBps = row.algbw_GBps * bus_factor(plan_.op, world_);
  }
  if (plan_.predictable && !ideal(plan_.link)) {
    const double predicted = collective_cost(plan_.op, row.algorithm, world_, bytes)
                                 .predict_s(plan_.link.latency_s, plan_.link.bandwidth_Bps);
    row.predicted_us = predicted * 1e6;
    if (predicted > 0) row.error_pct = (row.time_us / *row.predicted_us - 1) * 100;
  }
  return row;
}

void SweepRank::add_loopback(CollectiveRow& row, const Size& size, const Samples& s,
                             const std::vector<float>& all_iterations) const {
  // busbw / loopback rate = (loop bytes / collective time) / (loop bytes / round time).
  std::vector<double> paired;
  for (size_t i = 0; i < s.times.size(); ++i) {
    double slowest_us = 0;
    for (int r = 0; r < world_; ++r)
      slowest_us = std::max<double>(slowest_us, all_iterations[r * s.times.size() + i]);
    if (slowest_us > 0) paired.push_back(s.loop_times[i] / (slowest_us * 1e-6));
  }
  const double loop_s = median(s.loop_times);
  if (loop_s > 0) row.loopback_GBps = size.loop_bytes / loop_s / 1e9;
  if (!paired.empty()) row.vs_loopback_pct = median(paired) * 100;
}

}  // namespace

BareAllReduce bare_all_reduce(const std::string& backend) {
#ifdef DSGD_HAVE_MPI
  if (backend == "mpi")
    return [](float* data, size_t count) {
      if (count > static_cast<size_t>(INT_MAX))
        throw UsageError(
            fmt::format("bare MPI_Allreduce: {} floats is over MPI's int count", count));
      DSGD_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(count), MPI_FLOAT, MPI_SUM,
                                   MPI_COMM_WORLD));
    };
#endif
  (void)backend;
  return {};
}

double bus_factor(CollectiveOp op, int world) {
  const double n = world;
  switch (op) {
    case CollectiveOp::all_reduce:
      return 2 * (n - 1) / n;
    case CollectiveOp::all_gather:
    case CollectiveOp::reduce_scatter:
    case CollectiveOp::gather:
    case CollectiveOp::scatter:
      return (n - 1) / n;
    case CollectiveOp::broadcast:
    case CollectiveOp::reduce:
      return 1;
    case CollectiveOp::barrier:
      return 0;
  }
  return 1;
}

bool ideal(const sim::LinkSpec& link) {
  return link.latency_s == 0 && link.bandwidth_Bps == 0;
}

std::vector<uint64_t> size_sweep(CollectiveOp op, uint64_t min_bytes, uint64_t max_bytes,
                                 double factor) {
  if (op == CollectiveOp::barrier) return {0};
  std::vector<uint64_t> sizes;
  for (double s = static_cast<double>(min_bytes); s <= static_cast<double>(max_bytes);) {
    sizes.push_back(static_cast<uint64_t>(s));
    s = std::max(s + sizeof(float), std::ceil(s * factor));
  }
  return sizes;
}

void run_collective_bench(Communicator& comm, const CollectivePlan& plan,
                          const SweepObserver& observer) {
  const int world = comm.size();
  if (plan.root >= world)
    throw UsageError(
        fmt::format("--root {}: use a rank of the world, 0..{}", plan.root, world - 1));
  if (comm.rank() == 0 && observer.on_start) observer.on_start(world);
  SweepRank sweep(comm, plan);
  if (!plan.virtual_time) prctl(PR_SET_TIMERSLACK, 1000UL);  // wake within 1 us, not 50
  uint64_t last_bytes = UINT64_MAX;
  bool warmed_up = false;
  for (uint64_t requested : plan.sizes) {
    const Size size = sweep.resize(requested);
    if (size.bytes == last_bytes) continue;  // rounding to whole rows gave the same size again
    last_bytes = size.bytes;
    if (!warmed_up && !plan.virtual_time) {
      sweep.warm_up();
      warmed_up = true;
    }
    const std::optional<CollectiveRow> row = sweep.gather_row(size, sweep.time(size));
    if (row && observer.on_row) observer.on_row(*row);
  }
}

}  // namespace dsgd::bench
