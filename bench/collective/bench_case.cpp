// Buffers, inputs and checks of one benchmarked collective. R = world size, C = count,
// c = C / R elements per rank for the ops whose buffers have R rows.
#include "bench/collective/bench_case.h"

#include <algorithm>
#include <cmath>

namespace dsgd::bench {
namespace {

constexpr float kUnset = -1000.0f;  // outside every input and result range

bool has_rows(CollectiveOp op) {
  return op == CollectiveOp::gather || op == CollectiveOp::scatter ||
         op == CollectiveOp::all_gather || op == CollectiveOp::reduce_scatter;
}

}  // namespace

float bench_input(int r, size_t i) {
  return static_cast<float>(((r + 1) * 7 + static_cast<int>(i % 13)) % 11 - 5);
}

BenchCase::BenchCase(CollectiveOp op, ReduceOp reduce_op, int root, int world, int rank)
    : op_(op), reduce_op_(reduce_op), root_(root), world_(world), rank_(rank) {}

std::array<float, 13> BenchCase::inputs(int r) {
  std::array<float, 13> t;
  for (size_t k = 0; k < 13; ++k)
    t[k] = bench_input(r, k);
  return t;
}

const std::array<float, 13>& BenchCase::reduced() const {
  if (reduced_) return *reduced_;
  std::array<float, 13> acc = inputs(0);
  for (int r = 1; r < world_; ++r) {
    const std::array<float, 13> in = inputs(r);
    for (size_t k = 0; k < 13; ++k)
      acc[k] = reduce_pair(acc[k], in[k], reduce_op_);
  }
  if (reduce_op_ == ReduceOp::AVG)
    for (float& v : acc)
      v /= static_cast<float>(world_);
  return reduced_.emplace(acc);
}

size_t BenchCase::resize(size_t bytes) {
  const size_t floats = bytes / sizeof(float);
  per_rank_ = has_rows(op_) ? floats / world_ : floats;
  count_ = has_rows(op_) ? per_rank_ * world_ : floats;
  if (op_ == CollectiveOp::barrier) count_ = per_rank_ = 0;
  return count_ * sizeof(float);
}

void BenchCase::fill(std::span<float> v, int r) const {
  const std::array<float, 13> t = inputs(r);
  size_t k = 0;
  for (float& x : v) {
    x = t[k];
    if (++k == 13) k = 0;
  }
}

std::pair<size_t, size_t> BenchCase::buffer_sizes() const {
  const size_t c = per_rank_;
  const bool root = rank_ == root_;
  switch (op_) {
    case CollectiveOp::all_reduce:
    case CollectiveOp::reduce:
    case CollectiveOp::broadcast:
      return {count_, 0};
    case CollectiveOp::gather:
      return {c, root ? count_ : 0};
    case CollectiveOp::all_gather:
      return {c, count_};
    case CollectiveOp::scatter:
      return {root ? count_ : 0, c};
    case CollectiveOp::reduce_scatter:
      return {count_, c};
    case CollectiveOp::barrier:
      return {0, 0};
  }
  return {0, 0};
}

void BenchCase::reset() {
  const auto [na, nb] = buffer_sizes();
  if (shared_) {
    const std::span<float> both = shared_->shared_buffer(na + nb);
    a_ = both.first(na);
    b_ = both.subspan(na, nb);
    return;
  }
  a_store_.resize(na);
  b_store_.assign(nb, kUnset);
  a_ = a_store_;
  b_ = b_store_;
  switch (op_) {
    case CollectiveOp::broadcast:
      if (rank_ == root_)
        fill(a_, rank_);
      else
        std::fill(a_.begin(), a_.end(), kUnset);
      break;
    case CollectiveOp::scatter:
      // Row i of the root's send is what rank i's own input would be.
      for (int r = 0; rank_ == root_ && r < world_; ++r)
        fill(a_.subspan(r * per_rank_, per_rank_), r);
      break;
    case CollectiveOp::barrier:
      break;
    case CollectiveOp::all_reduce:
    case CollectiveOp::reduce:
    case CollectiveOp::gather:
    case CollectiveOp::all_gather:
    case CollectiveOp::reduce_scatter:
      fill(a_, rank_);
      break;
  }
}

void BenchCase::run(Communicator& comm, const CollectiveOptions& options) {
  switch (op_) {
    case CollectiveOp::all_reduce:
      all_reduce(comm, a_, reduce_op_, options);
      break;
    case CollectiveOp::broadcast:
      broadcast(comm, a_, root_, options);
      break;
    case CollectiveOp::reduce:
      reduce(comm, a_, reduce_op_, root_, options);
      break;
    case CollectiveOp::gather:
      gather(comm, a_, b_, root_, options);
      break;
    case CollectiveOp::scatter:
      scatter(comm, a_, b_, root_, options);
      break;
    case CollectiveOp::all_gather:
      all_gather(comm, a_, b_, options);
      break;
    case CollectiveOp::reduce_scatter:
      reduce_scatter(comm, a_, b_, reduce_op_, options);
      break;
    case CollectiveOp::barrier:
      barrier(comm, options);
      break;
  }
}

uint64_t BenchCase::mismatches(const float* out, size_t n, const std::array<float, 13>& table,
                               size_t first_index) const {
  uint64_t wrong = 0;
  size_t k = first_index % 13;
  if (reduce_op_ == ReduceOp::AVG) {
    // AVG divides once, on the owner: exact to one rounding of the exact quotient.
    for (size_t i = 0; i < n; ++i) {
      wrong += !(std::abs(out[i] - table[k]) <= 1e-6f * (1 + std::abs(table[k])));
      if (++k == 13) k = 0;
    }
    return wrong;
  }
  for (size_t i = 0; i < n; ++i) {
    wrong += out[i] != table[k];
    if (++k == 13) k = 0;
  }
  return wrong;
}

uint64_t BenchCase::count_wrong() const {
  if (shared_) return 0;  // phantom payloads: nothing to check
  const size_t c = per_rank_;
  switch (op_) {
    case CollectiveOp::all_reduce:
      return mismatches(a_.data(), count_, reduced(), 0);
    case CollectiveOp::reduce:
      return mismatches(a_.data(), count_, rank_ == root_ ? reduced() : inputs(rank_), 0);
    case CollectiveOp::broadcast: {
      // Exact copies: compare as data, whatever the reduce op.
      uint64_t wrong = 0;
      const std::array<float, 13> in = inputs(root_);
      for (size_t i = 0; i < count_; ++i)
        wrong += a_[i] != in[i % 13];
      return wrong;
    }
    case CollectiveOp::gather:
    case CollectiveOp::all_gather: {
      if (op_ == CollectiveOp::gather && rank_ != root_) return 0;
      uint64_t wrong = 0;
      for (int r = 0; r < world_; ++r) {
        const std::array<float, 13> in = inputs(r);
        for (size_t i = 0; i < c; ++i)
          wrong += b_[r * c + i] != in[i % 13];
      }
      return wrong;
    }
    case CollectiveOp::scatter: {
      uint64_t wrong = 0;
      const std::array<float, 13> in = inputs(rank_);
      for (size_t i = 0; i < c; ++i)
        wrong += b_[i] != in[i % 13];
      return wrong;
    }
    case CollectiveOp::reduce_scatter:
      return mismatches(b_.data(), c, reduced(), rank_ * c);
    case CollectiveOp::barrier:
      return 0;
  }
  return 0;
}

}  // namespace dsgd::bench
