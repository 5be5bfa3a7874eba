// BucketReducer: DistributedDataParallel's Reducer for dsgd's trainer. Each step, backward
// hands it every bucket (buckets.h) whose gradients are final, and a communication thread of
// its own all-reduces them while backward goes on with the lower layers, as Gloo's process
// group runs collectives on worker threads. Buckets are reduced one after another in their
// order, the same on every rank, so their collectives match.
// The Communicator changes hands, never is shared: from the first handed bucket to finish()
// only the communication thread calls it (the rank thread computes, and stamps its own
// events), and after finish() the rank thread has it back.
// Model time: a bucket's all_reduce starts no earlier than the model time backward reached
// when it handed the bucket over (Communicator::advance_model_to), so the rank's model time
// after finish() is the later of the compute's end and the last bucket's, as on a machine
// whose network works while its cores compute.
// Where the Communicator may be called from the rank's thread only (a SimGrid actor,
// Communicator::callable_from_any_thread), there is no thread: finish() reduces the handed
// buckets in order, each from its own model time, which is the same run in model time.
// Not a trainer: core/train/trainer.cpp decides when to hand buckets over.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "core/comm/collectives.h"
#include "core/train/buckets.h"

namespace dsgd {

class BucketReducer {
 public:
  // How one bucket is summed over the ranks, on the communication thread: `index` into
  // buckets, `data` the bucket's range of the gradient buffer (an all_reduce, or a hook's).
  using ReduceBucket = std::function<void(size_t index, std::span<float> data)>;
  BucketReducer(Communicator& comm, std::vector<GradientBucket> buckets, ReduceBucket reduce);
  ~BucketReducer();  // stops the thread once its bucket is done
  BucketReducer(const BucketReducer&) = delete;
  BucketReducer& operator=(const BucketReducer&) = delete;

  const std::vector<GradientBucket>& buckets() const { return buckets_; }

  // Rank thread, during a step's backward: every layer >= lowest_layer is done, and the
  // compute so far ends at model time `front_s`. Hands over each bucket that is now complete
  // (ranges of `grads`, the device's gradient buffer).
  void layers_done(int64_t lowest_layer, std::span<float> grads, double front_s);
  // Rank thread: waits until every bucket of the step is reduced (each wait inside has the
  // Communicator's deadline), then gives the Communicator back. Rethrows the first error the
  // communication thread met. Returns the seconds it spent in the step's all_reduces.
  double finish();

 private:
  struct Handed {
    size_t index;
    std::span<float> data;
    double front_s;
  };
  void serve();                  // the communication thread
  void reduce(const Handed& h);  // one bucket, on that thread
  double reduce_handed();        // without a thread: every bucket, on the rank's thread

  Communicator& comm_;
  const std::vector<GradientBucket> buckets_;
  const ReduceBucket reduce_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<Handed> handed_;  // this step's, in bucket order
  size_t done_ = 0;             // of handed_, reduced (or skipped after an error)
  double busy_s_ = 0;
  std::exception_ptr error_;
  bool stop_ = false;
  std::thread thread_;  // last: starts once the rest is built (none: reduce_handed)
};

}  // namespace dsgd
