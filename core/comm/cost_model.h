// The alpha-beta cost of each collective algorithm as dsgd implements it: how many message
// latencies lie on the critical path, how many bytes the busiest rank sends, and the time
// predicted for a link of latency alpha and bandwidth B. The benchmark prints these, the
// runtime predicts with them, and automatic algorithm choice compares them.
// Not a simulator: it assumes no compute time and no transport overhead per message.
#pragma once

#include <cstddef>
#include <string>

#include "core/comm/collectives.h"

namespace dsgd {

// R = world size, S = bytes (for gather, scatter, all_gather and reduce_scatter: the whole
// (R, c) buffer, as nccl-tests counts it), c = S / 4 / R floats per rank for those ops.
//
// The link model (the simulator's default mesh topology, sim/network.h): every directed
// link between two ranks has its own latency alpha and bandwidth B. A message of s bytes
// occupies its link for s/B and arrives alpha later. Messages on *different* links overlap
// fully, even when they leave or enter the same rank (no shared NIC), so a root sending to
// R-1 ranks at once pays alpha + s/B, not s/B. Messages on one link queue. Under
// that model the time of an algorithm is its longest chain of dependent messages:
//   predict_s = steps * alpha + critical_path_bytes / B.
// bytes_sent_per_rank is what the busiest rank sends: where a rank's messages share one
// NIC or uplink (real networks, the simulator's switch topology) it sets a floor of
// bytes_sent_per_rank / B that the formula above ignores; compare it with the
// bandwidth-optimal 2(R-1)/R S of all_reduce.
//
// The switch model (sim/network.h Topology::switch_): every rank has one uplink and one
// downlink, so messages that leave or enter one rank at once go one after another.
// predict_switch_s charges switch_path_bytes instead of critical_path_bytes: more where a
// root talks to R-1 ranks at once (naive all_reduce: 2(R-1) S through rank 0; gather and
// scatter: c), the same where each rank talks to one rank at a time (ring,
// halving-doubling; the binomial trees when R is a power of two; for other R a tree's
// later children wait for the earlier ones and predict_switch_s is a lower bound).
//
// Pipelining: the ring all-reduce sends a chunk larger than kRingSegmentFloats as
// `segments` messages (chunks.h), each passed on as soon as it arrives. With m segments of
// b = critical_path_bytes / (steps m) / B seconds each, the last one arrives after
//   max(steps m b + alpha, steps alpha + (steps + m - 1) b):
// the link is busy all the time when (m - 1) b covers a latency, and otherwise each step
// still waits a latency, but the segments behind the first overlap it.
struct Cost {
  int steps = 0;                     // messages one after another on the critical path
  double bytes_sent_per_rank = 0.0;  // the busiest rank's sent bytes
  double critical_path_bytes = 0.0;  // bytes crossing links one after another
  int segments = 1;                  // messages each step's piece travels in (pipelined)
  double switch_path_bytes = 0.0;    // the critical path's bytes on a switch; 0: the same
  // steps * alpha_s + critical_path_bytes / bandwidth_Bps (bandwidth 0 = unlimited), or the
  // pipelined time above when segments > 1.
  double predict_s(double alpha_s, double bandwidth_Bps) const;
  // predict_s on the switch model: with switch_path_bytes where it is set.
  double predict_switch_s(double alpha_s, double bandwidth_Bps) const;
};

// The cost of `op` run with the resolved `algorithm` (resolve_algorithm in collectives.h;
// automatic and native are resolved here the same way). UsageError for an algorithm the op
// lacks or a world below 1.
Cost collective_cost(CollectiveOp op, Algorithm algorithm, int world, size_t bytes);

// The formula behind collective_cost, for people: "2(R-1) * (alpha + S/R / B)".
std::string cost_formula(CollectiveOp op, Algorithm algorithm);

// The nominal link that automatic choice assumes (it must not depend on a rank's own link
// settings, so that every rank picks the same): about a 10 Gbit/s cluster link, and the
// order of what simulated nodes get over loopback.
inline constexpr double kAutoAlphaS = 25e-6;
inline constexpr double kAutoBandwidthBps = 1.25e9;

}  // namespace dsgd
