// DDP communication hooks: how a bucket of gradients (buckets.h) is summed over the ranks.
// --compress picks one, as DistributedDataParallel.register_comm_hook does:
//   fp16, bf16     torch's fp16_compress_hook / bf16_compress_hook: the bucket cast to 16 bits
//                  and divided by the world size, all-reduced as 16-bit floats (float16.h),
//                  cast back;
//   powersgd:R     torch's powerSGD_hook with PowerSGDState's defaults (powersgd_hook.h);
//   topk:RATIO     the largest RATIO of each bucket's values by magnitude, with error
//                  feedback (the rest is kept and added to the next step's), all-gathered.
// A hook gets this rank's share of its bucket's mean gradient (each gradient pre-scaled by
// 1/B, B the global batch: the plain sum over the ranks is the mean) and leaves in it that
// mean, or its approximation. Hooks that follow torch's arithmetic multiply by the world size
// first, to work on what torch's hooks see as bucket.buffer(): the rank's mean gradient.
// The trainer's own sums (loss, correct count) stay out of compressed buckets: with a hook
// each rank keeps its own, and rank 0 reports its slice's loss (as with local SGD).
// Not the bucketing: BucketReducer and the trainer decide when a bucket is handed over.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/comm/collectives.h"
#include "core/nn/model.h"
#include "core/train/buckets.h"

namespace dsgd {

// The --compress flag's value.
struct CompressSpec {
  enum class Kind { none, fp16, bf16, powersgd, topk };
  Kind kind = Kind::none;
  int64_t rank = 1;  // powersgd:R, PowerSGDState's matrix_approximation_rank
  double ratio = 0;  // topk:RATIO, in (0, 1]

  // "none" | "fp16" | "bf16" | "powersgd[:R]" | "topk:RATIO"; UsageError otherwise.
  static CompressSpec parse(const std::string& text);
  std::string str() const;  // parse(spec.str()) == spec
  bool operator==(const CompressSpec&) const = default;
};

// A gradient tensor of a bucket: where it lies in the bucket's values, and its shape as
// PowerSGD views it, tensor.view(shape[0], -1): a weight (out, in) is out x in, a bias
// (out,) is out x 1.
struct HookTensor {
  std::string name;
  int64_t offset = 0;  // into the bucket's values
  int64_t rows = 0, cols = 0;
};

struct HookBucket {
  int index = 0;                    // 0 is the first reduced (DDP's bucket.index())
  int64_t size = 0;                 // floats
  std::vector<HookTensor> tensors;  // in the order backward makes them
};

// The hook buckets of `model`'s gradient buffer: `buckets`' parameters (never their extra
// slots), or, without buckets, one bucket of every parameter.
std::vector<HookBucket> hook_buckets(const Model& model,
                                     const std::vector<GradientBucket>& buckets);

// What a hook sent, in floats, as PyTorch's PowerSGDState.compression_stats() counts it:
// elements of the buckets before compression, and what went on the wire instead (a 16-bit
// value counts as half). Summed over the steps that compressed.
struct CompressionStats {
  double before = 0, after = 0;
  double ratio() const { return after > 0 ? before / after : 0; }
};

// A collective a hook runs for a bucket (for the rank pairs a run talks over).
struct HookCollective {
  CollectiveOp op;
  size_t bytes;  // payload, as collective_pairs() takes it
};

class CommHook {
 public:
  virtual ~CommHook() = default;
  // Every collective reduce() may run for `bucket` over `world` ranks, whatever the step.
  virtual std::vector<HookCollective> collectives(const HookBucket& bucket, int world) const = 0;
  // On the thread that holds the Communicator. `values`: this rank's gradients of `bucket`,
  // each pre-scaled by 1/B (B the global batch), so that their plain sum over the ranks is
  // the mean gradient. On return, that sum, or the hook's approximation of it; the same on
  // every rank. Every rank calls it for the same buckets in the same order.
  virtual void reduce(Communicator& comm, const HookBucket& bucket, std::span<float> values) = 0;
  // After every bucket of a step is reduced (PowerSGD counts its iterations here).
  virtual void step_done() {}
  CompressionStats stats() const { return stats_; }

 protected:
  CompressionStats stats_;
};

struct CommHookOptions {
  CompressSpec spec;
  Algorithm algorithm = Algorithm::automatic;  // --allreduce, resolved per collective's size
  int64_t powersgd_start = 1000;               // PowerSGDState's start_powerSGD_iter
  uint64_t seed = 0;                           // PowerSGD's random initial Q
  // Tests: PowerSGD's initial Q instead (powersgd_hook.h's PowerSgdOptions::initial_q).
  std::function<void(const HookBucket&, const HookTensor&, std::span<float>)> initial_q;
};

// The hook of options.spec (nullptr for none).
std::unique_ptr<CommHook> make_comm_hook(const CommHookOptions& options);
std::unique_ptr<CommHook> make_float16_hook(WireFormat wire, Algorithm algorithm);
std::unique_ptr<CommHook> make_topk_hook(double ratio, Algorithm algorithm);

}  // namespace dsgd
