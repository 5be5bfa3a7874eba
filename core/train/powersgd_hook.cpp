// Notation: n = world size; for a compressed tensor M (rows x cols) of rank r, P is
// (rows x r) and Q (cols x r), all row-major.
#include "core/train/powersgd_hook.h"

#include <algorithm>
#include <cmath>

#include "core/data/rng.h"
#include "core/nn/blas.h"

namespace dsgd {
namespace {

// A tensor is worth compressing when rank r shrinks it by more than min_compression_rate
// (torch's _should_compress).
bool should_compress(const HookTensor& t, int64_t r, double min_rate) {
  return double((t.rows + t.cols) * r) * min_rate < double(t.rows * t.cols);
}

void scale(std::span<float> values, float by) {
  for (float& v : values)
    v *= by;
}

void divide(std::span<float> values, float by) {
  for (float& v : values)
    v /= by;
}

}  // namespace

void orthogonalize(std::span<float> m, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < cols; ++i) {
    double sum = 0;
    for (int64_t k = 0; k < rows; ++k)
      sum += double(m[k * cols + i]) * double(m[k * cols + i]);
    const float norm = static_cast<float>(std::sqrt(sum));
    if (norm > 0)
      for (int64_t k = 0; k < rows; ++k)
        m[k * cols + i] /= norm;
    for (int64_t j = i + 1; j < cols; ++j) {  // take column i out of the ones after it
      double dot = 0;
      for (int64_t k = 0; k < rows; ++k)
        dot += double(m[k * cols + i]) * double(m[k * cols + j]);
      for (int64_t k = 0; k < rows; ++k)
        m[k * cols + j] -= static_cast<float>(dot) * m[k * cols + i];
    }
  }
}

PowerSgdPlan plan_powersgd(const HookBucket& bucket, int64_t rank, double min_compression_rate) {
  PowerSgdPlan plan;
  for (const HookTensor& t : bucket.tensors) {
    const int64_t r = std::min({t.rows, t.cols, rank});
    plan.stats.before += double(t.rows * t.cols);
    if (!should_compress(t, r, min_compression_rate)) {
      plan.plain.push_back(&t);
      plan.plain_size += t.rows * t.cols;
      plan.stats.after += double(t.rows * t.cols);
      continue;
    }
    plan.compressed.push_back({.tensor = &t, .r = r, .p = plan.p_size, .q = plan.q_size});
    plan.p_size += t.rows * r, plan.q_size += t.cols * r;
    plan.stats.after += double((t.rows + t.cols) * r);
  }
  return plan;
}

std::vector<HookCollective> PowerSgdHook::collectives(const HookBucket& bucket, int) const {
  const PowerSgdPlan plan = plan_powersgd(bucket, options_.rank, options_.min_compression_rate);
  std::vector<HookCollective> out{{CollectiveOp::all_reduce, size_t(bucket.size) * sizeof(float)}};
  for (int64_t floats : {plan.plain_size, plan.p_size, plan.q_size})
    if (floats > 0) out.push_back({CollectiveOp::all_reduce, size_t(floats) * sizeof(float)});
  return out;
}

void PowerSgdHook::start_q(const HookBucket& bucket, const PowerSgdPlan& plan, BucketState& s) {
  for (const PowerSgdPlan::Compressed& c : plan.compressed) {
    const std::span<float> q(s.q.data() + c.q, static_cast<size_t>(c.tensor->cols * c.r));
    if (options_.initial_q) {
      options_.initial_q(bucket, *c.tensor, q);
      continue;
    }
    // A stream per (step, bucket, tensor): without warm start each step draws anew.
    data::Rng rng(options_.seed + uint64_t(iter_) * 0x9e3779b97f4a7c15ULL,
                  (uint64_t(bucket.index) << 32) + uint64_t(c.tensor->offset));
    for (float& v : q)
      v = static_cast<float>(rng.normal());
  }
  s.has_q = options_.warm_start;
}

void PowerSgdHook::reduce(Communicator& comm, const HookBucket& bucket, std::span<float> values) {
  if (iter_ < options_.start_iter) {  // torch's plain all_reduce of the mean
    all_reduce(comm, values, ReduceOp::SUM, {.algorithm = options_.algorithm});
    return;
  }
  BucketState& s = state_[bucket.index];
  scale(values, float(comm.size()));  // torch's bucket.buffer(): the rank's mean gradient
  if (options_.error_feedback) {
    if (s.error.empty())
      s.error.assign(values.size(), 0.0f);
    else
      for (size_t i = 0; i < values.size(); ++i)
        values[i] += s.error[i];
    s.input.assign(values.begin(), values.end());
  }
  compress(comm, bucket, values, s);
  if (options_.error_feedback)
    for (size_t i = 0; i < values.size(); ++i)
      s.error[i] = s.input[i] - values[i];
}

void PowerSgdHook::compress(Communicator& comm, const HookBucket& bucket, std::span<float> values,
                            BucketState& s) {
  const float n = float(comm.size());
  const CollectiveOptions collective{.algorithm = options_.algorithm};
  const PowerSgdPlan plan = plan_powersgd(bucket, options_.rank, options_.min_compression_rate);
  stats_.before += plan.stats.before;
  stats_.after += plan.stats.after;
  const std::vector<PowerSgdPlan::Compressed>& tensors = plan.compressed;
  const std::vector<const HookTensor*>& plain = plan.plain;
  using Compressed = PowerSgdPlan::Compressed;
  const auto matrix = [&](const Compressed& c) { return values.data() + c.tensor->offset; };
  if (!s.has_q) {
    s.p.assign(size_t(plan.p_size), 0.0f);
    s.q.assign(size_t(plan.q_size), 0.0f);
    start_q(bucket, plan, s);
  }
  for (const Compressed& c : tensors) {
    const HookTensor& t = *c.tensor;
    orthogonalize(std::span(s.q).subspan(c.q, t.cols * c.r), t.cols, c.r);
    gemm(false, false, t.rows, c.r, t.cols, 1, matrix(c), t.cols, s.q.data() + c.q, c.r, 0,
         s.p.data() + c.p, c.r);
  }
  s.uncompressed.clear();
  for (const HookTensor* t : plain)
    s.uncompressed.insert(s.uncompressed.end(), values.begin() + t->offset,
                          values.begin() + t->offset + t->rows * t->cols);
  if (!s.uncompressed.empty()) {
    all_reduce(comm, s.uncompressed, ReduceOp::SUM, collective);
    divide(s.uncompressed, n);
    int64_t at = 0;
    for (const HookTensor* t : plain) {
      std::copy_n(s.uncompressed.begin() + at, t->rows * t->cols, values.begin() + t->offset);
      at += t->rows * t->cols;
    }
  }
  if (tensors.empty()) return;
  all_reduce(comm, s.p, ReduceOp::SUM, collective);
  for (const Compressed& c : tensors) {
    const HookTensor& t = *c.tensor;
    orthogonalize(std::span(s.p).subspan(c.p, t.rows * c.r), t.rows, c.r);
    gemm(true, false, t.cols, c.r, t.rows, 1, matrix(c), t.cols, s.p.data() + c.p, c.r, 0,
         s.q.data() + c.q, c.r);
  }
  all_reduce(comm, s.q, ReduceOp::SUM, collective);
  divide(s.q, n);
  for (const Compressed& c : tensors) {
    const HookTensor& t = *c.tensor;
    gemm(false, true, t.rows, t.cols, c.r, 1, s.p.data() + c.p, c.r, s.q.data() + c.q, c.r, 0,
         matrix(c), t.cols);
  }
}

}  // namespace dsgd
