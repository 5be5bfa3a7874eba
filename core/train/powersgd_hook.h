// PowerSGD (Vogels, Karimireddy, Jaggi 2019) as PyTorch's powerSGD_hook runs it, with
// PowerSGDState's defaults: the first start_iter steps all-reduce plainly; from then on each
// bucket's matrices (a weight out x in; not biases, nor any matrix that rank R would not
// shrink by min_compression_rate) become P = M Q and Q = M^T P, one all_reduce of every P
// and one of every Q, with Gram-Schmidt orthogonalisation of Q (warm start: last step's Q)
// and of the summed P, and M ~ P Q^T / world. Error feedback keeps, per bucket, the input
// less the result (as torch: the rank's gradient less the mean, on the uncompressed tensors
// too) and adds it to the next step's.
// Where dsgd differs: Q's first values are standard normal from dsgd's seeded generator, not
// torch.randn (the same on every rank either way; tests replay torch's through initial_q);
// a column of P or Q that is all zeros stays zeros (torch's divides by its zero norm); rank
// R > 2 orthogonalises by Gram-Schmidt too, where torch calls a QR factorisation, whose
// columns may differ in sign only, which the product P Q^T does not see; a bucket without
// uncompressed tensors skips their (empty) all_reduce.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <vector>

#include "core/train/comm_hook.h"

namespace dsgd {

struct PowerSgdOptions {
  int64_t rank = 1;                 // matrix_approximation_rank
  int64_t start_iter = 1000;        // start_powerSGD_iter
  double min_compression_rate = 2;  // min_compression_rate
  bool error_feedback = true;       // use_error_feedback
  bool warm_start = true;           // warm_start
  uint64_t seed = 0;                // for the initial Q
  Algorithm algorithm = Algorithm::automatic;
  // Fills a compressed tensor's first Q (cols x r, row-major, r = min(rows, cols, rank)),
  // once per bucket when PowerSGD starts (every step without warm start), before it is
  // orthogonalised. Empty: standard normal values from (seed, bucket, tensor).
  std::function<void(const HookBucket&, const HookTensor&, std::span<float> q)> initial_q;
};

// How PowerSGD treats a bucket: the tensors it compresses, each with its rank r and its
// place in the bucket's P and Q memory, and those it all-reduces plainly.
struct PowerSgdPlan {
  struct Compressed {
    const HookTensor* tensor;  // into the bucket planned
    int64_t r, p, q;
  };
  std::vector<Compressed> compressed;
  std::vector<const HookTensor*> plain;
  int64_t p_size = 0, q_size = 0, plain_size = 0;  // floats
  CompressionStats stats;                          // this bucket, one step
};
PowerSgdPlan plan_powersgd(const HookBucket& bucket, int64_t rank, double min_compression_rate);

class PowerSgdHook : public CommHook {
 public:
  explicit PowerSgdHook(PowerSgdOptions options) : options_(std::move(options)) {}
  std::vector<HookCollective> collectives(const HookBucket& bucket, int world) const override;
  void reduce(Communicator& comm, const HookBucket& bucket, std::span<float> values) override;
  void step_done() override { ++iter_; }
  int64_t iter() const { return iter_; }

 private:
  struct BucketState {
    std::vector<float> error, input, uncompressed, p, q;
    bool has_q = false;
  };
  void start_q(const HookBucket& bucket, const PowerSgdPlan& plan, BucketState& s);
  void compress(Communicator& comm, const HookBucket& bucket, std::span<float> values,
                BucketState& s);

  PowerSgdOptions options_;
  int64_t iter_ = 0;
  std::map<int, BucketState> state_;  // by bucket index
};

// Gram-Schmidt on the columns of a (rows x cols) row-major matrix, in place, as torch's
// _orthogonalize_gram_schmidt with epsilon 0 (a zero column stays zero).
void orthogonalize(std::span<float> matrix, int64_t rows, int64_t cols);

}  // namespace dsgd
