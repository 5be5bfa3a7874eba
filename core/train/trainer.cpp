// B = global batch, R = ranks, n = this rank's rows in the step, D = features,
// O = model outputs, P = parameters.
#include "core/train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "core/data/sampler.h"
#include "core/train/bucket_reducer.h"
#include "core/train/cpu_device.h"
#include "core/train/parameter_server.h"
#include "core/train/rank_setup.h"
#include "core/errors.h"
#include "core/nn/loss.h"

namespace dsgd {

bool uses_mse(const ModelSpec& spec) {
  return spec.kind == ModelSpec::Kind::linear;
}

int64_t model_outputs(const ModelSpec& spec, const Dataset& data) {
  return data.task == Task::classification ? data.classes : 1;
}

bool local_step(const TrainConfig& config, int64_t step) {
  return config.local_period > 0 && step >= config.local_start;
}

bool reports_own_slice(const TrainConfig& config, int64_t step) {
  return local_step(config, step) || config.compress.kind != CompressSpec::Kind::none ||
         config.parameter_servers > 0;
}

bool averages_after(const TrainConfig& config, int64_t step) {
  return local_step(config, step) && (step - config.local_start) % config.local_period == 0;
}

int64_t total_steps(const TrainConfig& config, const Dataset& data) {
  if (config.steps > 0) return config.steps;
  const int64_t per_epoch = (data.train.size() + config.global_batch - 1) / config.global_batch;
  return per_epoch * config.epochs;
}

TrainingAlgorithms training_algorithms(const TrainConfig& config, int world, int64_t params) {
  const size_t gradient_bytes = static_cast<size_t>(params + kExtra) * sizeof(float);
  const Algorithm gradients =
      resolve_algorithm(CollectiveOp::all_reduce, config.allreduce, world, gradient_bytes);
  const size_t params_bytes = static_cast<size_t>(params) * sizeof(float);
  return {.gradients = gradients,
          .broadcast = broadcast_along(gradients),
          .evaluation = config.allreduce == Algorithm::native ? Algorithm::native : gradients,
          .averaging =
              resolve_algorithm(CollectiveOp::all_reduce, config.allreduce, world, params_bytes)};
}

std::vector<GradientBucket> training_buckets(const TrainConfig& config, const Model& model) {
  if (config.bucket_bytes <= 0) return {};
  const bool hooked = config.compress.kind != CompressSpec::Kind::none;
  return assign_buckets(model, config.first_bucket_bytes, config.bucket_bytes, hooked ? 0 : kExtra);
}

namespace {

std::unique_ptr<CommHook> training_hook(const TrainConfig& config) {
  return make_comm_hook({.spec = config.compress,
                         .algorithm = config.allreduce,
                         .powersgd_start = config.powersgd_start,
                         .seed = config.seed,
                         .initial_q = config.powersgd_initial_q});
}

// The pairs of every collective the run's hook runs, for each of its buckets.
void add_hook_pairs(std::vector<RankPair>& pairs, const TrainConfig& config, const Model& model,
                    int world) {
  const std::unique_ptr<CommHook> hook = training_hook(config);
  if (!hook) return;
  for (const HookBucket& b : hook_buckets(model, training_buckets(config, model)))
    for (const HookCollective& c : hook->collectives(b, world)) {
      const Algorithm a = resolve_algorithm(
          c.op, c.op == CollectiveOp::all_reduce ? config.allreduce : Algorithm::automatic, world,
          c.bytes);
      merge_pairs(pairs, collective_pairs(c.op, a, world, c.bytes));
    }
}

}  // namespace

std::vector<RankPair> training_pairs(const TrainConfig& config, const Dataset& data, int world) {
  const Model model =
      Model::from_spec(config.model, data.features, model_outputs(config.model, data), kExtra);
  const TrainingAlgorithms a = training_algorithms(config, world, model.num_params());
  const size_t params_bytes = static_cast<size_t>(model.num_params()) * sizeof(float);
  std::vector<RankPair> pairs = collective_pairs(CollectiveOp::all_reduce, a.gradients, world,
                                                 params_bytes + kExtra * sizeof(float));
  for (const GradientBucket& b : training_buckets(config, model)) {
    const size_t bytes = static_cast<size_t>(b.end - b.begin) * sizeof(float);
    const Algorithm bucket =
        resolve_algorithm(CollectiveOp::all_reduce, config.allreduce, world, bytes);
    merge_pairs(pairs, collective_pairs(CollectiveOp::all_reduce, bucket, world, bytes));
  }
  add_hook_pairs(pairs, config, model, world);
  if (config.parameter_servers > 0 && config.parameter_servers < world)
    merge_pairs(pairs, server_pairs(server_layout(world, config.parameter_servers)));
  merge_pairs(pairs, collective_pairs(CollectiveOp::broadcast, a.broadcast, world, params_bytes));
  if (config.local_period > 0)
    merge_pairs(pairs,
                collective_pairs(CollectiveOp::all_reduce, a.averaging, world, params_bytes));
  merge_pairs(pairs, collective_pairs(CollectiveOp::all_reduce, a.evaluation, world,
                                      kExtra * sizeof(float)));
  return pairs;
}

void validate_config(const TrainConfig& config) {
  if (config.global_batch < 1)
    throw UsageError(
        fmt::format("--batch {}: the global batch needs at least 1 sample", config.global_batch));
  if (config.steps < 0 || config.epochs < 0 || (config.steps == 0 && config.epochs == 0))
    throw UsageError("--steps or --epochs must be at least 1");
  if (config.steps > 100'000'000 || config.epochs > 1'000'000)
    throw UsageError("--steps above 1e8 or --epochs above 1e6 would not finish; use fewer");
  if (config.eval_every < 0) throw UsageError("--eval-every must be 0 (each epoch) or more");
  if (config.local_period < 0 || config.local_start < 0)
    throw UsageError(fmt::format("--local-sgd {} from step {}: give a period >= 1 and a step >= 0",
                                 config.local_period, config.local_start));
  if (config.compress.kind != CompressSpec::Kind::none && config.local_period > 0)
    throw UsageError(fmt::format(
        "--compress {} and --local-sgd {}: a local SGD step sends no gradients to compress; "
        "use one of them",
        config.compress.str(), config.local_period));
  if (config.powersgd_start < 0)
    throw UsageError(fmt::format("--powersgd-start {}: give a step >= 0", config.powersgd_start));
}

void validate(const TrainConfig& config, const Dataset& data) {
  validate_config(config);
  if (config.global_batch > data.train.size())
    throw UsageError(
        fmt::format("--batch {} is larger than the {} training samples of {}; use "
                    "at most {}",
                    config.global_batch, data.train.size(), data.name, data.train.size()));
  Model::check_inputs(config.model, data.features);
  if (data.task == Task::regression && !uses_mse(config.model))
    throw UsageError(
        fmt::format("--model {} is a classifier but the data are a regression "
                    "task; use --model linear",
                    config.model.str()));
}

namespace {

// Brings the device's parameters and momentum into model and sgd (checkpoints, the result).
void pull(ComputeDevice& device, Model& model, Sgd& sgd) {
  device.get_params(model.values());
  std::vector<float> momentum(static_cast<size_t>(model.num_params()));
  if (device.get_momentum(momentum)) sgd.set_momentum_buffer(momentum, "the device");
}

// One rank's view of the run while it trains.
struct Run {
  Communicator& comm;
  const Dataset& data;
  const TrainConfig& config;
  ComputeDevice& device;
  DataParallelSampler sampler;
  std::vector<double> layer_macs;  // per sample
  double macs = 0;                 // their sum
  int64_t params = 0;
  // Before the reducer, whose thread calls the hook: destroyed after it.
  std::unique_ptr<CommHook> hook;              // with config.compress
  std::vector<HookBucket> hook_buckets;        // its buckets (one without bucket_bytes)
  std::unique_ptr<BucketReducer> reducer;      // with config.bucket_bytes
  Algorithm averaging = Algorithm::automatic;  // local SGD's average of the parameters
  std::vector<float> averaged;                 // (P) its buffer, with local SGD
};

// The seconds a step's gradients took: computing them, and all-reducing them.
struct GradientTimes {
  double compute_s = 0, comm_s = 0;
};

// Forward and backward on `rows` (each gradient pre-scaled by `scale` = 1/B, so that the
// all_reduce's SUM is the gradient of the mean loss over the global batch), then, when
// `reduce`, one all_reduce of every gradient (a local SGD step has none).
GradientTimes gradients_then_reduce(Run& run, std::span<const int64_t> rows, float scale,
                                    bool reduce) {
  Communicator& comm = run.comm;
  const Clock::time_point start = Clock::now();
  comm.emit({.kind = EventKind::compute_begin, .op = "forward_backward"});
  std::span<float> grads = run.device.gradients(rows, scale);
  comm.on_compute(seconds_since(start), 6.0 * run.macs * double(rows.size()));
  comm.emit({.kind = EventKind::compute_end, .op = "forward_backward"});
  GradientTimes t{.compute_s = seconds_since(start)};
  if (!reduce) return t;
  const Clock::time_point comm_start = Clock::now();
  if (run.hook)
    run.hook->reduce(comm, run.hook_buckets[0], grads.first(size_t(run.params)));
  else
    run.device.reduce_gradients(comm, grads, run.config.allreduce);
  t.comm_s = seconds_since(comm_start);
  return t;
}

// DDP's way: backward hands each bucket whose gradients are final to the reducer, whose
// thread all-reduces it while backward goes on. Until finish() the Communicator is that
// thread's: this thread only computes, models its compute's time (`front_s`, the model
// time the compute has reached) and stamps its own events.
GradientTimes gradients_in_buckets(Run& run, std::span<const int64_t> rows, float scale) {
  Communicator& comm = run.comm;
  const Clock::time_point start = Clock::now();
  comm.emit({.kind = EventKind::compute_begin, .op = "forward_backward"});
  const double n = double(rows.size());
  double front_s = comm.model_s();
  double flops = 2.0 * run.macs * n;  // the forward, counted with the first layer done
  int64_t next_layer = static_cast<int64_t>(run.layer_macs.size());
  Clock::time_point since = start;
  const auto layers_done = [&](int64_t lowest, std::span<float> grads) {
    for (; next_layer > lowest; --next_layer)
      flops += 4.0 * run.layer_macs[next_layer - 1] * n;
    comm.straggle(seconds_since(since));
    since = Clock::now();
    front_s += comm.compute_model_s(std::exchange(flops, 0.0));
    run.reducer->layers_done(lowest, grads, front_s);
  };
  run.device.gradients_by_layer(rows, scale, layers_done);
  GradientTimes t{.compute_s = seconds_since(start)};
  comm.emit({.kind = EventKind::compute_end, .model_s = front_s, .op = "forward_backward"});
  t.comm_s = run.reducer->finish();
  comm.advance_model_to(front_s);
  comm.on_compute(0, 0);  // a crash fault at a time fires here, as after any compute
  return t;
}

// Local SGD's periodic model averaging: every rank takes the mean of all ranks' parameters.
// Returns its seconds.
double average_parameters(Run& run) {
  const Clock::time_point start = Clock::now();
  run.device.get_params(run.averaged);
  all_reduce(run.comm, run.averaged, ReduceOp::AVG, {.algorithm = run.averaging});
  run.device.set_params(run.averaged);
  return seconds_since(start);
}

// One step: the gradients of this rank's slice, summed over every rank (or, in a local SGD
// step, this rank's alone), then the update. Returns what rank 0 reports; `global` is the
// step's batch.
StepMetrics run_step(Run& run, int64_t step, DataParallelSampler::Batch& global) {
  Communicator& comm = run.comm;
  const uint64_t bytes_before = comm.bytes_sent();
  global = run.sampler.batch(step);
  const int64_t b = static_cast<int64_t>(global.indices.size());
  auto [lo, hi] = DataParallelSampler::slice(b, comm.rank(), comm.size());
  const std::span<const int64_t> rows = global.indices.subspan(lo, hi - lo);
  const bool local = local_step(run.config, step);
  const int64_t own_rows = std::max<int64_t>(hi - lo, 1);
  // The mean over the rows the update sees: the global batch's, or this rank's slice's.
  const float scale = 1.0f / static_cast<float>(local ? own_rows : b);
  GradientTimes g = run.reducer && !local ? gradients_in_buckets(run, rows, scale)
                                          : gradients_then_reduce(run, rows, scale, !local);
  if (run.hook) run.hook->step_done();
  // The rows the loss and correct count were summed over (reduced with the gradients, or not).
  const int64_t rows_seen = reports_own_slice(run.config, step) ? own_rows : b;
  const Clock::time_point update_start = Clock::now();
  comm.emit({.kind = EventKind::compute_begin, .op = "update"});
  float extra[kExtra];  // the loss sum and correct count (of rows_seen)
  run.device.update(extra);
  const double update_s = seconds_since(update_start);
  comm.on_compute(update_s, 4.0 * double(run.params));
  comm.emit({.kind = EventKind::compute_end, .op = "update"});
  if (averages_after(run.config, step)) g.comm_s += average_parameters(run);
  StepMetrics m{.step = step + 1, .epoch = global.epoch, .loss = extra[0] / double(rows_seen)};
  if (run.data.task == Task::classification) m.train_accuracy = extra[1] / double(rows_seen);
  m.comm_s = g.comm_s;
  m.compute_s = g.compute_s + update_s;
  m.bytes_sent = comm.bytes_sent() - bytes_before;
  return m;
}

// How the run's gradients are summed: its hook over its buckets, and the reducer that
// all-reduces buckets while backward goes on.
void start_reducing(Run& run, const Model& model, TrainResult& result) {
  const TrainConfig& config = run.config;
  std::vector<GradientBucket> buckets = training_buckets(config, model);
  run.hook = training_hook(config);
  if (run.hook) run.hook_buckets = hook_buckets(model, buckets);
  if (buckets.empty()) return;
  result.buckets = describe_buckets(buckets);
  BucketReducer::ReduceBucket reduce = [&run](size_t i, std::span<float> data) {
    if (run.hook)
      run.hook->reduce(run.comm, run.hook_buckets[i], data);
    else
      run.device.reduce_gradients(run.comm, data, run.config.allreduce);
  };
  run.reducer = std::make_unique<BucketReducer>(run.comm, std::move(buckets), std::move(reduce));
}

TrainState state_after(const StepMetrics& m, const DataParallelSampler::Batch& global,
                       const Model& model, const Sgd& sgd) {
  TrainState state{.step = m.step,
                   .epoch = global.epoch,
                   .batch_in_epoch = global.index_in_epoch,
                   .loss = m.loss,
                   .params = model.state()};
  if (sgd.has_momentum_buffer()) {
    auto buffer = sgd.momentum_buffer();
    state.momentum.assign(buffer.begin(), buffer.end());
  }
  return state;
}

// A loss that is no longer a number (too high a learning rate, bad data) never comes back:
// the run stops there, on every rank alike (the loss is the reduced one), keeping nothing.
void check_finite(const StepMetrics& m, const TrainConfig& config) {
  if (std::isfinite(m.loss)) return;
  throw Error(fmt::format(
      "step {}: the training loss is {} (the run diverged); nothing was saved: lower the "
      "learning rate (now {:g}) or check the data for NaN and Inf",
      m.step, std::isnan(m.loss) ? "NaN" : "infinite", config.sgd.lr));
}

// The state after step m to the hooks that want it now: a checkpoint's, a commit's.
void hand_over_state(const TrainHooks& hooks, const StepMetrics& m,
                     const DataParallelSampler::Batch& global, ComputeDevice& device, Model& model,
                     Sgd& sgd) {
  const bool checkpoint =
      hooks.on_checkpoint && hooks.checkpoint_every > 0 && m.step % hooks.checkpoint_every == 0;
  if (!checkpoint && !hooks.on_commit) return;
  pull(device, model, sgd);
  const TrainState state = state_after(m, global, model, sgd);
  if (checkpoint) hooks.on_checkpoint(state);
  if (hooks.on_commit) hooks.on_commit(state);
}

}  // namespace

void add_step(TrainResult& result, const StepMetrics& m) {
  result.compute_s += m.compute_s;
  result.comm_s += m.comm_s;
  result.bytes_sent += m.bytes_sent;
  result.final_loss = m.loss;
  result.steps = m.step;
  ++result.steps_run;
  if (m.test_loss) result.test_loss = m.test_loss;
  if (m.test_accuracy) result.test_accuracy = m.test_accuracy;
}

TrainResult train(Communicator& comm, const Dataset& data, const TrainConfig& config,
                  const std::vector<NamedTensor>* init, const TrainHooks& hooks,
                  const TrainState* resume) {
  validate(config, data);
  if (config.parameter_servers > 0) {
    if (resume || hooks.checkpoint_every > 0)
      throw UsageError(
          "--parameter-servers: a checkpoint holds no server's shard; train without "
          "checkpoints");
    return train_with_servers(comm, data, config, init, hooks);
  }
  Model model =
      Model::from_spec(config.model, data.features, model_outputs(config.model, data), kExtra);
  Sgd sgd(config.sgd, model.num_params());
  const int64_t steps = total_steps(config, data);
  TrainResult result;
  const TrainingAlgorithms algorithms =
      training_algorithms(config, comm.size(), model.num_params());
  const int64_t first_step =
      start(comm, config, steps, model, sgd, init, resume, algorithms.broadcast);
  if (resume) result.steps = resume->step, result.final_loss = resume->loss;
  const std::unique_ptr<ComputeDevice> device = make_device(comm, config, data, model, sgd);
  result.gradient_reducer = device->gradient_reducer();
  Run run{.comm = comm,
          .data = data,
          .config = config,
          .device = *device,
          .sampler = DataParallelSampler(data.train.size(), config.global_batch, config.shuffle,
                                         config.seed),
          .layer_macs = model.macs_per_layer(),
          .params = model.num_params()};
  for (double macs : run.layer_macs)
    run.macs += macs;
  run.averaging = algorithms.averaging;
  if (config.local_period > 0) run.averaged.resize(static_cast<size_t>(model.num_params()));
  start_reducing(run, model, result);
  const Clock::time_point t0 = Clock::now();
  for (int64_t step = first_step; step < steps; ++step) {
    comm.on_step(step + 1);
    comm.emit({.kind = EventKind::step_begin, .seq = uint64_t(step + 1), .op = "step"});
    DataParallelSampler::Batch global{};
    StepMetrics m = run_step(run, step, global);
    check_finite(m, config);
    if (evaluates_after(config, step, steps, global.index_in_epoch,
                        run.sampler.batches_per_epoch())) {
      const Evaluation e = evaluate(comm, *device, data, algorithms.evaluation);
      m.test_loss = e.loss;
      m.test_accuracy = e.accuracy;
    }
    m.wall_s = seconds_since(t0);
    m.model_s = comm.model_s();
    comm.emit({.kind = EventKind::step_end, .seq = uint64_t(step + 1), .op = "step"});
    add_step(result, m);
    if (hooks.on_step) hooks.on_step(m);
    hand_over_state(hooks, m, global, *device, model, sgd);
  }
  result.wall_s = seconds_since(t0);
  if (run.hook) result.compression = run.hook->stats();
  result.world = comm.size();
  result.model_s = comm.model_s();
  pull(*device, model, sgd);
  result.params = model.state();
  return result;
}

}  // namespace dsgd
