// DataParallelSampler: which samples each rank trains on at each step. Every rank builds
// the same sampler and computes the same global batches without communicating.
// B = global batch, R = ranks (world), N = samples in the train split.
// Not a data loader: it hands out indices; gather_rows() copies the rows.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "core/data/dataset.h"

namespace dsgd {

// Each step takes the next global batch of B sample indices: a seeded permutation per epoch,
// or file order with shuffle = false. The last batch of an epoch may be smaller, like
// PyTorch's DataLoader with drop_last=False. Rank r of R takes a contiguous slice of it.
//
// The permutation of epoch e is a Fisher-Yates shuffle (i from N-1 down to 1, swap i with
// j = Rng(seed, e + 1).uniform_index(i + 1)) of 0..N-1, so it depends only on (seed, e).
class DataParallelSampler {
 public:
  // Throws UsageError unless num_samples >= 1 and global_batch >= 1. A global batch larger
  // than the data set gives one batch of all samples per epoch.
  DataParallelSampler(int64_t num_samples, int64_t global_batch, bool shuffle, uint64_t seed);

  int64_t num_samples() const { return num_samples_; }
  int64_t global_batch() const { return global_batch_; }
  int64_t batches_per_epoch() const { return (num_samples_ + global_batch_ - 1) / global_batch_; }

  struct Batch {
    int64_t epoch;
    int64_t index_in_epoch;
    std::span<const int64_t> indices;  // valid until batch() is called for another epoch
  };
  // step counts from 0 across epochs. Caches the current epoch's permutation, so calls with
  // steps in increasing order cost O(N) once per epoch.
  Batch batch(int64_t step);

  // [begin, end) of rank's slice of a batch of batch_size: sizes differ by at most 1, and
  // the first (batch_size % world) ranks get one more. Throws UsageError for a bad rank.
  static std::pair<int64_t, int64_t> slice(int64_t batch_size, int rank, int world);

 private:
  int64_t num_samples_;
  int64_t global_batch_;
  bool shuffle_;
  uint64_t seed_;
  int64_t cached_epoch_ = -1;
  std::vector<int64_t> order_;  // (N) the current epoch's sample order
};

// Copies rows `indices` of split into x_out (n, D) and, when they are non-empty, the labels
// into labels_out (n) and the targets into targets_out (n).
void gather_rows(const Split& split, std::span<const int64_t> indices, std::span<float> x_out,
                 std::span<int32_t> labels_out = {}, std::span<float> targets_out = {});

}  // namespace dsgd
