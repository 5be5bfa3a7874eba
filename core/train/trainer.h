// The data-parallel synchronous SGD trainer: the one training loop every backend runs.
// Each step, every rank computes gradients on its slice of the global batch, one
// all_reduce sums them (each slice pre-scaled by 1/B, so the sum is the gradient of the
// mean loss over the whole batch), and every rank applies the same SGD update.
// Not a launcher: the caller provides the Communicator (simulated node or MPI rank).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/comm/collective_pairs.h"
#include "core/comm/collectives.h"
#include "core/data/dataset.h"
#include "core/io/npz.h"
#include "core/nn/model.h"
#include "core/nn/sgd.h"
#include "core/train/buckets.h"
#include "core/train/comm_hook.h"
#include "core/train/device.h"

namespace dsgd {

struct TrainConfig {
  ModelSpec model = ModelSpec::parse("mlp:64");
  int64_t global_batch = 256;  // B, split across ranks
  SgdOptions sgd{.lr = 0.1f, .momentum = 0.9f};
  int64_t steps = 0;   // when > 0, run exactly this many steps
  int64_t epochs = 5;  // otherwise this many passes over the train split
  uint64_t seed = 0;   // parameter init and shuffling
  bool shuffle = true;
  Algorithm allreduce = Algorithm::automatic;
  int64_t eval_every = 0;  // evaluate on the test split every K steps (0: each epoch's end)
  // > 0: DDP's gradient buckets of this cap (buckets.h), each all-reduced on a communication
  // thread while backward goes on (bucket_reducer.h); 0: one all_reduce after backward.
  int64_t bucket_bytes = 0;
  int64_t first_bucket_bytes = kFirstBucketBytes;
  // Post-local SGD, as PyTorch's PostLocalSGDState(start_localSGD_iter=K) hook with
  // PeriodicModelAverager(period=H, warmup_steps=K): from step K on (counting from 0), each
  // rank updates with its own slice's mean gradient, no all_reduce, and after steps K, K + H,
  // K + 2H, ... the ranks average their parameters (one all_reduce; momentum stays each
  // rank's own). local_period = H > 0 turns it on; 0: synchronous SGD throughout.
  int64_t local_period = 0;
  int64_t local_start = 0;  // K
  // A DDP communication hook (comm_hook.h) each bucket (or, without buckets, the whole
  // gradient) is summed with: --compress. none: one exact all_reduce.
  CompressSpec compress;
  int64_t powersgd_start = 1000;  // PowerSGDState's start_powerSGD_iter
  // Tests only: PowerSGD's initial Q instead of dsgd's seeded draw (powersgd_hook.h).
  std::function<void(const HookBucket&, const HookTensor&, std::span<float>)> powersgd_initial_q;
  DeviceFactory device;  // where each rank computes: empty for the CPU (--device cuda: cli)
  // Asynchronous SGD with parameter servers (parameter_server.h): the last S ranks hold
  // shards of the parameters, the others are workers. 0: synchronous SGD.
  int parameter_servers = 0;
  // How many steps a worker may run ahead of the slowest one (stale synchronous parallel);
  // 0 is synchronous, -1 unbounded.
  int64_t max_staleness = -1;
};

// What one step did, as rank 0 saw it (loss and accuracy are over the global batch; in a
// local SGD step or with a --compress hook, over rank 0's slice of it).
struct StepMetrics {
  int64_t step = 0;  // 1-based: the number of updates done
  int64_t epoch = 0;
  double loss = 0;
  std::optional<double> train_accuracy;  // classification only
  std::optional<double> test_loss;       // when evaluated after this step
  std::optional<double> test_accuracy;
  double wall_s = 0;        // since training started
  double model_s = -1;      // the backend's model time after this step (-1: it has none)
  double compute_s = 0;     // this step: forward, backward, update
  double comm_s = 0;        // this step: the gradient all_reduce (with buckets: the time
                            // their all_reduces took, much of it beside the backward)
  uint64_t bytes_sent = 0;  // this step, by this rank
  // With parameter servers: the updates the servers applied between this worker's pull
  // and its push of the previous step (the staleness of that gradient).
  std::optional<int64_t> staleness;
};

// With parameter servers: the staleness of every update the servers applied, in updates
// applied to the same shard between the worker's pull and its push.
struct StalenessStats {
  int64_t updates = 0;
  double mean = 0;
  int64_t max = 0;
};

struct TrainResult {
  int world = 1;
  int64_t steps = 0;      // updates done, counting those of a resumed checkpoint
  int64_t steps_run = 0;  // updates this run made (steps less the resumed ones)
  double model_s = -1;    // the backend's model time at the end (-1: it has none)
  double final_loss = 0;  // training loss of the last step
  std::optional<double> test_loss, test_accuracy;
  double wall_s = 0, compute_s = 0, comm_s = 0;
  uint64_t bytes_sent = 0;
  std::string gradient_reducer;  // "NCCL 2.28.9" where the devices summed the gradients
  std::string buckets;           // describe_buckets(), with bucket_bytes
  CompressionStats compression;  // with a --compress hook, over the steps it compressed
  StalenessStats staleness;      // with parameter servers
  // Final parameters: identical on every rank, except with local SGD after a step that did
  // not average (as in PyTorch, each rank then keeps its own).
  std::vector<NamedTensor> params;
};

// Where a run stands after `step` updates: what a checkpoint holds and train() resumes
// from. The sampler needs no state of its own: batch `step` of a seed is a pure function
// of (seed, step), and its generator is re-seeded from (seed, epoch) each epoch.
struct TrainState {
  int64_t step = 0;            // updates done; the next batch is sampler.batch(step)
  int64_t epoch = 0;           // epoch of the last batch taken (step - 1)
  int64_t batch_in_epoch = 0;  // its index within that epoch
  double loss = 0;             // training loss of that step
  std::vector<NamedTensor> params;
  std::vector<float> momentum;  // (P) the SGD momentum buffer; empty when momentum is 0
};

struct TrainHooks {
  std::function<void(const StepMetrics&)> on_step;  // called on every rank after each step
  // Called after every `checkpoint_every`-th step's update (never when 0), on each rank
  // that sets it, with the state a resumed run needs.
  std::function<void(const TrainState&)> on_checkpoint;
  int64_t checkpoint_every = 0;
  // Called after every step's update on each rank that sets it, with the same state: an
  // elastic run's commit (Horovod's state.commit()), which survivors continue from.
  std::function<void(const TrainState&)> on_commit;
};

// The algorithms of a run's collectives. The broadcast and the evaluation talk over the
// pairs of the gradients' algorithm where they can (collective_pairs.h), so that a
// transport that connects ranks as they first talk opens no other connection for them.
struct TrainingAlgorithms {
  Algorithm gradients;   // each step's all_reduce of P + 2 floats: config.allreduce resolved
  Algorithm broadcast;   // rank 0's parameters, before the first step
  Algorithm evaluation;  // the test split's loss sum and correct count (2 floats)
  Algorithm averaging;   // local SGD's average of the P parameters
};
TrainingAlgorithms training_algorithms(const TrainConfig& config, int world, int64_t params);
// Whether the step's loss and accuracy are rank 0's slice's alone: a local SGD step, a
// step whose gradients a compression hook sums (the exact sums ride with exact gradients),
// or a worker's step with parameter servers.
bool reports_own_slice(const TrainConfig& config, int64_t step);
// The gradient buckets of a run of `config` (none without bucket_bytes).
std::vector<GradientBucket> training_buckets(const TrainConfig& config, const Model& model);
// The rank pairs a run of `config` on `data` over `world` ranks talks over: those of the
// three collectives above, and of each bucket's all_reduce.
std::vector<RankPair> training_pairs(const TrainConfig& config, const Dataset& data, int world);

// Loss the model is trained with: cross-entropy for softmax and mlp, MSE for linear.
bool uses_mse(const ModelSpec& spec);
// Number of model outputs for a dataset: C for classification, 1 for regression.
int64_t model_outputs(const ModelSpec& spec, const Dataset& data);
// Whether step `step` (counting from 0) of `config` is a local SGD step, and whether the
// ranks average their parameters after it.
bool local_step(const TrainConfig& config, int64_t step);
bool averages_after(const TrainConfig& config, int64_t step);
// Steps a run of config takes on data.
int64_t total_steps(const TrainConfig& config, const Dataset& data);
// What train() adds to its result for each step: time, traffic, the step, the last loss and
// evaluation.
void add_step(TrainResult& result, const StepMetrics& m);
// Throws UsageError for a config that cannot run whatever the data (a local SGD run with a
// compression hook, ...), and for one that cannot run on data (batch larger than the data).
void validate_config(const TrainConfig& config);
void validate(const TrainConfig& config, const Dataset& data);

// Trains on every rank of comm. `init`, when given, replaces the seeded initialisation
// (all ranks must pass the same). Rank 0's parameters are broadcast before the first
// step, as PyTorch's DistributedDataParallel does. `resume`, when given (all ranks the
// same), continues from that state instead: `init` is then ignored, and the remaining
// steps give the parameters an uninterrupted run would have, bit for bit, provided the
// config and world size are those of the run that saved it. UsageError when the state is
// already past the config's last step; DataError when it does not fit the model.
TrainResult train(Communicator& comm, const Dataset& data, const TrainConfig& config,
                  const std::vector<NamedTensor>* init = nullptr, const TrainHooks& hooks = {},
                  const TrainState* resume = nullptr);

}  // namespace dsgd
