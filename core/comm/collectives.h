// Collectives, written once over the Communicator's point-to-point calls, so the same
// code runs on simulated nodes and MPI ranks. Names follow torch.distributed. Each
// algorithm lives in its own file (allreduce_ring.cpp, gather_linear.cpp, ...); the entry
// points here check sizes, mark the collective in the event stream and dispatch.
// Every rank must call the same collectives in the same order with the same sizes.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "core/comm/communicator.h"
#include "core/comm/reduce_op.h"

namespace dsgd {

enum class Algorithm {
  automatic,           // dsgd picks by op, size and world (resolve_algorithm)
  naive,               // all_reduce: reduce to a root, then send back; gather/scatter: direct
  ring,                // reduce-scatter then all-gather around a ring (bandwidth-optimal)
  tree,                // binomial tree reduce, then binomial tree broadcast
  halving_doubling,    // recursive halving reduce-scatter + doubling all-gather (Rabenseifner)
  recursive_doubling,  // partners at distance 1, 2, 4, ... swap whole buffers (short messages)
  native,              // the backend's own (MPI_Allreduce); dsgd's choice where none exists
};

const char* to_string(Algorithm algorithm);
// Every algorithm, in the order help texts and errors list them.
inline constexpr Algorithm kAllAlgorithms[] = {Algorithm::automatic,
                                               Algorithm::naive,
                                               Algorithm::ring,
                                               Algorithm::tree,
                                               Algorithm::halving_doubling,
                                               Algorithm::recursive_doubling,
                                               Algorithm::native};
// dsgd's own all_reduce algorithms (automatic and native stand for one of them).
inline constexpr Algorithm kAllReduceAlgorithms[] = {Algorithm::naive, Algorithm::ring,
                                                     Algorithm::tree, Algorithm::halving_doubling,
                                                     Algorithm::recursive_doubling};
Algorithm parse_algorithm(const std::string& text);  // UsageError lists the valid names
// Every algorithm's name, in order, for help texts and errors: joined by `separator`, the
// last by `last` ("auto | naive | ... | native", or "auto, naive, ... or native").
std::string algorithm_names(const char* separator, const char* last);

enum class CollectiveOp {
  broadcast,
  reduce,
  all_reduce,
  gather,
  scatter,
  all_gather,
  reduce_scatter,
  barrier,
};

const char* to_string(CollectiveOp op);
CollectiveOp parse_collective_op(const std::string& text);  // UsageError lists the names

struct CollectiveOptions {
  Algorithm algorithm = Algorithm::automatic;
};

// The dsgd algorithm that runs for `op` when `requested` is asked for (for native: the one
// that runs where the backend has none). all_reduce offers naive, ring, tree and
// halving_doubling; automatic picks the one the cost model (cost_model.h) predicts fastest
// for a nominal link, from world and bytes only, so every rank picks the same. broadcast
// offers tree (binomial, automatic's choice) and ring (a chain along the ring, which talks
// over the ring all_reduce's pairs only). Every other op has one algorithm: reduce tree
// (binomial), gather and scatter naive (direct to/from the root), all_gather and
// reduce_scatter ring, barrier automatic (dissemination). Asking an op for an algorithm it
// lacks is a UsageError.
Algorithm resolve_algorithm(CollectiveOp op, Algorithm requested, int world, size_t bytes);
// What the resolved algorithm is called for this op: "binomial tree", "ring", ...
const char* algorithm_label(CollectiveOp op, Algorithm resolved);

// Reserved tags, one per collective kind, above every user tag. Messages between one pair
// with one tag never overtake each other, and all ranks run collectives in the same order,
// so one tag per kind is enough to keep collectives apart from user traffic.
namespace collective_tag {
inline constexpr int kBroadcast = kCollectiveTagBase + 1;
inline constexpr int kReduce = kCollectiveTagBase + 2;
inline constexpr int kAllReduceNaive = kCollectiveTagBase + 3;
inline constexpr int kAllReduceRing = kCollectiveTagBase + 4;
inline constexpr int kBarrier = kCollectiveTagBase + 5;
inline constexpr int kAllReduceTree = kCollectiveTagBase + 6;
inline constexpr int kAllReduceHalvingDoubling = kCollectiveTagBase + 7;
inline constexpr int kGather = kCollectiveTagBase + 8;
inline constexpr int kScatter = kCollectiveTagBase + 9;
inline constexpr int kAllGather = kCollectiveTagBase + 10;
inline constexpr int kReduceScatter = kCollectiveTagBase + 11;
inline constexpr int kBroadcastRing = kCollectiveTagBase + 12;
inline constexpr int kAllReduceRecursiveDoubling = kCollectiveTagBase + 13;
}  // namespace collective_tag

// Shapes: R = world size, c = elements each rank contributes or receives.
// data: on root the values to send, elsewhere overwritten with root's values.
void broadcast(Communicator& comm, std::span<float> data, int root,
               const CollectiveOptions& options = {});
// data: on root overwritten with the reduction over all ranks; unchanged elsewhere.
void reduce(Communicator& comm, std::span<float> data, Reduction op, int root,
            const CollectiveOptions& options = {});
// data: overwritten on every rank with the reduction over all ranks. With a Reduction over
// 16-bit values (float16.h), data holds them packed, two to a float, on the wire and after.
void all_reduce(Communicator& comm, std::span<float> data, Reduction op = ReduceOp::SUM,
                const CollectiveOptions& options = {});
// send is (c); recv is (R, c) on root: row i is rank i's send; elsewhere empty or (R, c)
// and left untouched.
void gather(Communicator& comm, std::span<const float> send, std::span<float> recv, int root,
            const CollectiveOptions& options = {});
// send is (R, c) on root (row i goes to rank i); elsewhere empty or (R, c), unread.
// recv is (c) everywhere.
void scatter(Communicator& comm, std::span<const float> send, std::span<float> recv, int root,
             const CollectiveOptions& options = {});
// send is (c); recv is (R, c) on every rank: row i is rank i's send.
void all_gather(Communicator& comm, std::span<const float> send, std::span<float> recv,
                const CollectiveOptions& options = {});
// send is (R, c); recv is (c): on rank i, row i of the reduction of every rank's send.
void reduce_scatter(Communicator& comm, std::span<const float> send, std::span<float> recv,
                    Reduction op = ReduceOp::SUM, const CollectiveOptions& options = {});
// Returns once every rank has entered it.
void barrier(Communicator& comm, const CollectiveOptions& options = {});

// The algorithms behind the entry points, callable directly (lessons, benchmarks, tests).
// They trust their arguments: the entry points above check sizes and roots.
void all_reduce_naive(Communicator& comm, std::span<float> data, Reduction op);
void all_reduce_ring(Communicator& comm, std::span<float> data, Reduction op);
void all_reduce_tree(Communicator& comm, std::span<float> data, Reduction op);
void all_reduce_halving_doubling(Communicator& comm, std::span<float> data, Reduction op);
void all_reduce_recursive_doubling(Communicator& comm, std::span<float> data, Reduction op);
void broadcast_binomial(Communicator& comm, std::span<float> data, int root,
                        int tag = collective_tag::kBroadcast);
void broadcast_chain(Communicator& comm, std::span<float> data, int root,
                     int tag = collective_tag::kBroadcastRing);
// acc: this rank's contribution, used as scratch on every rank; on root the reduction
// (before finish_reduce: AVG is still a sum). Non-roots end with a partial result.
void reduce_binomial(Communicator& comm, std::span<float> acc, Reduction op, int root,
                     int tag = collective_tag::kReduce);
void gather_linear(Communicator& comm, std::span<const float> send, std::span<float> recv,
                   int root);
void scatter_linear(Communicator& comm, std::span<const float> send, std::span<float> recv,
                    int root);
void all_gather_ring(Communicator& comm, std::span<const float> send, std::span<float> recv);
void reduce_scatter_ring(Communicator& comm, std::span<const float> send, std::span<float> recv,
                         Reduction op);
void barrier_dissemination(Communicator& comm);

}  // namespace dsgd
