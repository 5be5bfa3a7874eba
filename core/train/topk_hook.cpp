// Top-k sparsification with error feedback (Stich, Cordonnier, Jaggi 2018; Lin et al.'s Deep
// Gradient Compression without its momentum correction): each rank adds the error it kept
// to its gradients, sends the k = ceil(RATIO x size) values of largest magnitude with their
// indices, and keeps the rest as the next step's error. The ranks' picks differ, so they
// cannot be summed on the way: one all_gather brings every rank's k pairs to all, and each
// rank adds them up in rank order, so all ranks end with the same values. PyTorch has no such
// built-in hook; this one follows the papers.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <utility>
#include <vector>

#include "core/train/comm_hook.h"

namespace dsgd {
namespace {

class TopkHook : public CommHook {
 public:
  TopkHook(double ratio, Algorithm algorithm) : ratio_(ratio), algorithm_(algorithm) {}

  std::vector<HookCollective> collectives(const HookBucket& bucket, int world) const override {
    return {{CollectiveOp::all_gather, 2 * picks(size_t(bucket.size)) * sizeof(float) * world}};
  }

  void reduce(Communicator& comm, const HookBucket& bucket, std::span<float> values) override {
    std::vector<float>& error = errors_[bucket.index];
    if (error.empty()) error.assign(values.size(), 0.0f);
    for (size_t i = 0; i < values.size(); ++i)
      error[i] += values[i];  // the error is now the whole of what this rank owes
    const size_t k = picks(values.size());
    send_.resize(2 * k);
    pick_largest(error, k);
    received_.resize(send_.size() * size_t(comm.size()));
    all_gather(comm, send_, received_, {.algorithm = gather_algorithm()});
    std::fill(values.begin(), values.end(), 0.0f);
    for (int r = 0; r < comm.size(); ++r) {
      const float* from = received_.data() + size_t(r) * 2 * k;
      for (size_t j = 0; j < k; ++j)
        values[std::bit_cast<uint32_t>(from[j])] += from[k + j];
    }
    stats_.before += double(values.size());
    stats_.after += double(2 * k);
  }

 private:
  // all_gather has one algorithm of dsgd's (ring) beside the backend's own.
  Algorithm gather_algorithm() const {
    return algorithm_ == Algorithm::native ? Algorithm::native : Algorithm::automatic;
  }

  size_t picks(size_t size) const {
    const auto k = static_cast<size_t>(std::ceil(ratio_ * double(size)));
    return std::clamp<size_t>(k, 1, size);
  }

  // send_ = the k indices (as their bits) then the k values of `owed`'s largest magnitudes,
  // indices ascending (ties go to the lower index); those values leave `owed`.
  void pick_largest(std::vector<float>& owed, size_t k) {
    order_.resize(owed.size());
    std::iota(order_.begin(), order_.end(), uint32_t{0});
    // A total order, NaN first (a diverged run's; the trainer stops it after the step), so
    // that nth_element stays within bounds.
    const auto magnitude = [&](uint32_t i) {
      const float x = std::fabs(owed[i]);
      return std::isnan(x) ? std::numeric_limits<float>::infinity() : x;
    };
    const auto larger = [&](uint32_t a, uint32_t b) {
      const float x = magnitude(a), y = magnitude(b);
      return x > y || (x == y && a < b);
    };
    std::nth_element(order_.begin(), order_.begin() + long(k) - 1, order_.end(), larger);
    std::sort(order_.begin(), order_.begin() + long(k));
    for (size_t j = 0; j < k; ++j) {
      send_[j] = std::bit_cast<float>(order_[j]);
      send_[k + j] = std::exchange(owed[order_[j]], 0.0f);
    }
  }

  double ratio_;
  Algorithm algorithm_;
  std::map<int, std::vector<float>> errors_;  // by bucket index
  std::vector<uint32_t> order_;
  std::vector<float> send_, received_;
};

}  // namespace

std::unique_ptr<CommHook> make_topk_hook(double ratio, Algorithm algorithm) {
  return std::make_unique<TopkHook>(ratio, algorithm);
}

}  // namespace dsgd
