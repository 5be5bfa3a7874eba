// Gradient buckets, as PyTorch's DistributedDataParallel groups them: parameters in the
// order backward produces their gradients (the reverse of model.parameters()), a new bucket
// once the current one holds at least its limit. The first bucket's limit is 1 MiB
// (torch.distributed._DEFAULT_FIRST_BUCKET_BYTES, --first-bucket-mb), so the first
// all_reduce starts early; the others' is bucket_cap_mb (--bucket-mb, DDP's default 25). This is
// the assignment DDP's Reducer rebuilds after its first iteration, once it has seen that order
// (dist._compute_bucket_assignment_by_size(params in ready order, [1 MiB, cap])); dsgd knows
// the order beforehand and uses it from the first step.
// Not the all_reduce: BucketReducer (bucket_reducer.h) runs the buckets' collectives.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/nn/model.h"

namespace dsgd {

inline constexpr int64_t kFirstBucketBytes = int64_t{1} << 20;

// DDP's rule for when a bucket is full: once it holds at least this many bytes, given how
// many buckets were closed before it.
inline int64_t bucket_limit(size_t closed, int64_t first_bytes, int64_t cap_bytes) {
  return closed == 0 ? first_bytes : cap_bytes;
}

// One bucket: a contiguous range of the model's gradient buffer (Model::grad_buffer()).
struct GradientBucket {
  int64_t begin = 0, end = 0;  // floats [begin, end) of the gradient buffer
  std::vector<int> params;     // indices into Model::params(), in the order they become ready
  int64_t lowest_layer = 0;    // the bucket is complete once backward has done this layer
};

// The buckets of `model` for caps of `first_bytes` (the first bucket) and `cap_bytes` (the
// others), in the order they are reduced. The gradient buffer's `extra` slots after the
// parameters (the trainer's loss sum and correct count, known before backward starts) join
// the first bucket.
std::vector<GradientBucket> assign_buckets(const Model& model, int64_t first_bytes,
                                           int64_t cap_bytes, int64_t extra);

// MB as DDP reads bucket_cap_mb: int(mb * 1024 * 1024) bytes; and back, as a flag's value
// for messages ("25", "0.01").
int64_t bucket_cap_bytes(double mb);
std::string bucket_mb_text(int64_t bytes);
// "3 buckets: 1.02 MB + 25 MB + 130 KB" (each bucket's floats; MB and KB are binary, as
// DDP counts bucket_cap_mb); three or more alike in a row as one: "5 x 25 MB".
std::string describe_buckets(const std::vector<GradientBucket>& buckets);
// The same for buckets of these sizes in bytes.
std::string describe_bucket_bytes(const std::vector<double>& bytes);

}  // namespace dsgd
