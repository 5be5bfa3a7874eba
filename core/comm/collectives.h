// Collectives, written once over the Communicator's point-to-point calls, so the same
// code runs on simulated nodes and MPI ranks. Names follow torch.distributed. Each
// algorithm lives in its own file (allreduce_ring.cpp, ...); this header dispatches.
// Every rank must call the same collectives in the same order with the same sizes.
#pragma once

#include <span>
#include <string>

#include "core/comm/communicator.h"
#include "core/comm/reduce_op.h"

namespace dsgd {

enum class Algorithm {
  automatic,         // dsgd picks by size and world (see all_reduce)
  naive,             // reduce to a root, then broadcast from it
  ring,              // reduce-scatter then all-gather around a ring (bandwidth-optimal)
  tree,              // binomial tree reduce, then binomial tree broadcast
  halving_doubling,  // recursive halving reduce-scatter + doubling all-gather
  native,            // the backend's own (MPI_Allreduce); dsgd's choice where none exists
};

const char* to_string(Algorithm algorithm);
Algorithm parse_algorithm(const std::string& text);  // UsageError lists the valid names

struct CollectiveOptions {
  Algorithm algorithm = Algorithm::automatic;
};

// Reserved tags, one per collective kind, above every user tag. Messages between one pair
// with one tag never overtake each other, and all ranks run collectives in the same order,
// so one tag per kind is enough to keep collectives apart from user traffic.
namespace collective_tag {
inline constexpr int kBroadcast = kCollectiveTagBase + 1;
inline constexpr int kReduce = kCollectiveTagBase + 2;
inline constexpr int kAllReduceNaive = kCollectiveTagBase + 3;
inline constexpr int kAllReduceRing = kCollectiveTagBase + 4;
inline constexpr int kBarrier = kCollectiveTagBase + 5;
}  // namespace collective_tag

// data: on root the values to send, elsewhere overwritten with root's values.
void broadcast(Communicator& comm, std::span<float> data, int root);
// data: on root overwritten with the reduction over all ranks; unchanged elsewhere.
void reduce(Communicator& comm, std::span<float> data, ReduceOp op, int root);
// data: overwritten on every rank with the reduction over all ranks.
void all_reduce(Communicator& comm, std::span<float> data, ReduceOp op = ReduceOp::SUM,
                const CollectiveOptions& options = {});
// Returns once every rank has entered it.
void barrier(Communicator& comm);

// The algorithms behind all_reduce, callable directly (lessons, benchmarks, tests).
void all_reduce_naive(Communicator& comm, std::span<float> data, ReduceOp op);
void all_reduce_ring(Communicator& comm, std::span<float> data, ReduceOp op);

}  // namespace dsgd
