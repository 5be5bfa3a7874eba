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
    : op_(op), reduce_op_(reduce_op), root_(root), world_(world), rank_(rank), inputs_(world) {
  for (int r = 0; r < world; ++r)
    for (size_t k = 0; k < 13; ++k)
      inputs_[r][k] = bench_input(r, k);
  for (size_t k = 0; k < 13; ++k) {
    float acc = inputs_[0][k];
    for (int r = 1; r < world; ++r)
      acc = reduce_pair(acc, inputs_[r][k], reduce_op);
    reduced_[k] = reduce_op == ReduceOp::AVG ? acc / static_cast<float>(world) : acc;
  }
}

size_t BenchCase::resize(size_t bytes) {
  const size_t floats = bytes / sizeof(float);
  per_rank_ = has_rows(op_) ? floats / world_ : floats;
  count_ = has_rows(op_) ? per_rank_ * world_ : floats;
  if (op_ == CollectiveOp::barrier) count_ = per_rank_ = 0;
  return count_ * sizeof(float);
}

void BenchCase::fill(std::vector<float>& v, size_t n, int r, size_t first_index) const {
  v.resize(n);
  const std::array<float, 13>& t = inputs_[r];
  size_t k = first_index % 13;
  for (size_t i = 0; i < n; ++i) {
    v[i] = t[k];
    if (++k == 13) k = 0;
  }
}

void BenchCase::reset() {
  const size_t c = per_rank_;
  switch (op_) {
    case CollectiveOp::all_reduce:
    case CollectiveOp::reduce:
      fill(a_, count_, rank_, 0);
      break;
    case CollectiveOp::broadcast:
      if (rank_ == root_)
        fill(a_, count_, rank_, 0);
      else
        a_.assign(count_, kUnset);
      break;
    case CollectiveOp::gather:
      fill(a_, c, rank_, 0);
      b_.assign(rank_ == root_ ? count_ : 0, kUnset);
      break;
    case CollectiveOp::all_gather:
      fill(a_, c, rank_, 0);
      b_.assign(count_, kUnset);
      break;
    case CollectiveOp::scatter:
      // Row i of the root's send is what rank i's own input would be.
      a_.resize(rank_ == root_ ? count_ : 0);
      if (rank_ == root_) {
        std::vector<float> row;
        for (int r = 0; r < world_; ++r) {
          fill(row, c, r, 0);
          std::copy(row.begin(), row.end(), a_.begin() + r * c);
        }
      }
      b_.assign(c, kUnset);
      break;
    case CollectiveOp::reduce_scatter:
      fill(a_, count_, rank_, 0);
      b_.assign(c, kUnset);
      break;
    case CollectiveOp::barrier:
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
  const size_t c = per_rank_;
  switch (op_) {
    case CollectiveOp::all_reduce:
      return mismatches(a_.data(), count_, reduced_, 0);
    case CollectiveOp::reduce:
      return mismatches(a_.data(), count_, rank_ == root_ ? reduced_ : inputs_[rank_], 0);
    case CollectiveOp::broadcast: {
      // Exact copies: compare as data, whatever the reduce op.
      uint64_t wrong = 0;
      for (size_t i = 0; i < count_; ++i)
        wrong += a_[i] != inputs_[root_][i % 13];
      return wrong;
    }
    case CollectiveOp::gather:
    case CollectiveOp::all_gather: {
      if (op_ == CollectiveOp::gather && rank_ != root_) return 0;
      uint64_t wrong = 0;
      for (int r = 0; r < world_; ++r)
        for (size_t i = 0; i < c; ++i)
          wrong += b_[r * c + i] != inputs_[r][i % 13];
      return wrong;
    }
    case CollectiveOp::scatter: {
      uint64_t wrong = 0;
      for (size_t i = 0; i < c; ++i)
        wrong += b_[i] != inputs_[rank_][i % 13];
      return wrong;
    }
    case CollectiveOp::reduce_scatter:
      return mismatches(b_.data(), c, reduced_, rank_ * c);
    case CollectiveOp::barrier:
      return 0;
  }
  return 0;
}

}  // namespace dsgd::bench
