#include "core/data/sampler.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "core/data/rng.h"
#include "core/errors.h"

namespace dsgd {

DataParallelSampler::DataParallelSampler(int64_t num_samples, int64_t global_batch, bool shuffle,
                                         uint64_t seed)
    : num_samples_(num_samples), global_batch_(global_batch), shuffle_(shuffle), seed_(seed) {
  if (num_samples < 1)
    throw UsageError(fmt::format(
        "cannot sample batches from {} training samples; the training split needs at least one",
        num_samples));
  if (global_batch < 1)
    throw UsageError(
        fmt::format("--batch {}: the global batch must be at least 1 sample", global_batch));
  global_batch_ = std::min(global_batch, num_samples);
}

DataParallelSampler::Batch DataParallelSampler::batch(int64_t step) {
  if (step < 0) throw std::invalid_argument(fmt::format("sampler step {} < 0", step));
  int64_t per_epoch = batches_per_epoch();
  int64_t epoch = step / per_epoch;
  int64_t index = step % per_epoch;
  if (epoch != cached_epoch_) {
    order_.resize(static_cast<size_t>(num_samples_));
    std::iota(order_.begin(), order_.end(), int64_t{0});
    if (shuffle_) {
      // Stream e + 1: stream 0 of the same seed stays free for other uses.
      data::Rng rng(seed_, static_cast<uint64_t>(epoch) + 1);
      for (int64_t i = num_samples_ - 1; i > 0; --i) {
        auto j = static_cast<int64_t>(rng.uniform_index(static_cast<uint64_t>(i) + 1));
        std::swap(order_[i], order_[j]);
      }
    }
    cached_epoch_ = epoch;
  }
  int64_t begin = index * global_batch_;
  int64_t end = std::min(begin + global_batch_, num_samples_);
  return {epoch, index, std::span<const int64_t>(order_).subspan(begin, end - begin)};
}

std::pair<int64_t, int64_t> DataParallelSampler::slice(int64_t batch_size, int rank, int world) {
  if (world < 1 || rank < 0 || rank >= world || batch_size < 0)
    throw UsageError(
        fmt::format("cannot slice a batch of {} for rank {} of {}: need 0 <= rank "
                    "< world and batch >= 0",
                    batch_size, rank, world));
  int64_t base = batch_size / world, extra = batch_size % world;
  int64_t begin = rank * base + std::min<int64_t>(rank, extra);
  return {begin, begin + base + (rank < extra ? 1 : 0)};
}

void gather_rows(const Split& split, std::span<const int64_t> indices, std::span<float> x_out,
                 std::span<int32_t> labels_out, std::span<float> targets_out) {
  int64_t d = split.x.shape().size() == 2 ? split.x.dim(1) : 0;
  auto n = static_cast<int64_t>(indices.size());
  if (static_cast<int64_t>(x_out.size()) != n * d ||
      (!labels_out.empty() && labels_out.size() != indices.size()) ||
      (!targets_out.empty() && targets_out.size() != indices.size()))
    throw std::invalid_argument(
        fmt::format("gather_rows: {} indices of {} features do not fit the output buffers", n, d));
  for (int64_t r = 0; r < n; ++r) {
    int64_t i = indices[r];
    if (i < 0 || i >= split.size())
      throw std::out_of_range(fmt::format("gather_rows: index {} not in [0, {})", i, split.size()));
    std::memcpy(x_out.data() + r * d, split.x.data() + i * d, sizeof(float) * d);
    if (!labels_out.empty()) labels_out[r] = split.labels.at(i);
    if (!targets_out.empty()) targets_out[r] = split.targets.at(i);
  }
}

}  // namespace dsgd
