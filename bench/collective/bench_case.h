// One collective under test on one rank, for `dsgd bench collective`: its buffers, inputs
// whose reductions are exact in float in any order (small rank-dependent integers, as in
// nccl-tests' verifiable mode), and the check of every element of the result.
// Not a timer: collective_bench.cpp times run() and counts what count_wrong() finds.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "core/comm/collectives.h"

namespace dsgd::bench {

// The input of element i on rank r: an integer in -5..5 that depends on i only through
// i mod 13, so results can be checked against a 13-entry table.
float bench_input(int r, size_t i);

class BenchCase {
 public:
  BenchCase(CollectiveOp op, ReduceOp reduce_op, int root, int world, int rank);

  // Phantom payloads (Communicator::phantom): the buffers are memory every rank of the run
  // shares, never filled and never checked (count_wrong: 0).
  void share_buffers(Communicator& comm) { shared_ = &comm; }
  bool checked() const { return shared_ == nullptr; }

  // Sizes the buffers for a row of `bytes`: the whole buffer for all_reduce, broadcast and
  // reduce; the (R, c) buffer for gather, scatter, all_gather and reduce_scatter (as
  // nccl-tests counts). Returns the bytes used: whole floats, R equal rows where rows apply.
  size_t resize(size_t bytes);
  size_t count() const { return count_; }  // floats in the size above
  // all_reduce's buffer (in place), which the bare MPI_Allreduce baseline also uses, so both
  // run on the very same memory.
  std::span<float> data() { return a_; }

  // Inputs in place, outputs filled with a value no result can have (shared: sized only).
  void reset();
  void run(Communicator& comm, const CollectiveOptions& options);
  uint64_t count_wrong() const;  // elements of this rank's result that differ from exact

 private:
  // The floats of data (or send) and recv on this rank.
  std::pair<size_t, size_t> buffer_sizes() const;
  void fill(std::span<float> v, int r) const;  // rank r's inputs
  // Elements of out[0, n) differing from table[(first_index + i) mod 13].
  uint64_t mismatches(const float* out, size_t n, const std::array<float, 13>& table,
                      size_t first_index) const;

  CollectiveOp op_;
  ReduceOp reduce_op_;
  int root_, world_, rank_;
  size_t count_ = 0, per_rank_ = 0;
  // Rank r's inputs by i mod 13; the exact reduction over all ranks, once asked for (an
  // O(R) sum, which phantom payloads never need: thousands of ranks would pay R^2).
  static std::array<float, 13> inputs(int r);
  const std::array<float, 13>& reduced() const;
  mutable std::optional<std::array<float, 13>> reduced_;
  std::vector<float> a_store_, b_store_;  // the buffers, unless shared
  std::span<float> a_, b_;                // data (or send) and recv
  Communicator* shared_ = nullptr;
};

}  // namespace dsgd::bench
