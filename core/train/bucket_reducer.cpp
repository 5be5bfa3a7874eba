#include "core/train/bucket_reducer.h"

#include <chrono>
#include <stdexcept>
#include <utility>

namespace dsgd {

BucketReducer::BucketReducer(Communicator& comm, std::vector<GradientBucket> buckets,
                             ReduceBucket reduce)
    : comm_(comm),
      buckets_(std::move(buckets)),
      reduce_(std::move(reduce)),
      thread_(comm.callable_from_any_thread() ? std::thread([this] { serve(); }) : std::thread()) {
  std::lock_guard lock(mutex_);  // the thread already runs
  handed_.reserve(buckets_.size());
}

BucketReducer::~BucketReducer() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void BucketReducer::layers_done(int64_t lowest_layer, std::span<float> grads, double front_s) {
  {
    std::lock_guard lock(mutex_);
    while (handed_.size() < buckets_.size() &&
           buckets_[handed_.size()].lowest_layer >= lowest_layer) {
      const GradientBucket& b = buckets_[handed_.size()];
      handed_.push_back({handed_.size(), grads.subspan(b.begin, b.end - b.begin), front_s});
    }
  }
  cv_.notify_all();
}

double BucketReducer::finish() {
  std::unique_lock lock(mutex_);
  if (handed_.size() != buckets_.size())
    throw std::logic_error("BucketReducer::finish: backward did not finish every layer");
  if (!thread_.joinable()) {
    lock.unlock();
    return reduce_handed();
  }
  cv_.wait(lock, [&] { return done_ == buckets_.size(); });
  const double busy_s = busy_s_;
  std::exception_ptr error = std::exchange(error_, nullptr);
  handed_.clear();
  done_ = 0;
  busy_s_ = 0;
  if (error) std::rethrow_exception(error);
  return busy_s;
}

void BucketReducer::serve() {
  std::unique_lock lock(mutex_);
  while (true) {
    cv_.wait(lock, [&] { return stop_ || done_ < handed_.size(); });
    if (stop_) return;  // the rank thread is leaving (an error): what is left is not needed
    const Handed h = handed_[done_];
    const bool failed = error_ != nullptr;
    lock.unlock();
    const auto t0 = std::chrono::steady_clock::now();
    std::exception_ptr error;
    if (!failed) {
      try {
        reduce(h);
      } catch (...) {
        error = std::current_exception();
      }
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    lock.lock();
    if (error && !error_) error_ = error;
    busy_s_ += s;
    ++done_;
    cv_.notify_all();
  }
}

double BucketReducer::reduce_handed() {
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<Handed> handed = std::exchange(handed_, {});
  handed_.reserve(buckets_.size());
  for (const Handed& h : handed)
    reduce(h);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void BucketReducer::reduce(const Handed& h) {
  comm_.advance_model_to(h.front_s);
  reduce_(h.index, h.data);
}

}  // namespace dsgd
