// B = global batch, R = ranks, n = this rank's rows in the step, D = features,
// O = model outputs, P = parameters.
#include "core/train/trainer.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "core/data/sampler.h"
#include "core/errors.h"
#include "core/nn/loss.h"

namespace dsgd {
namespace {

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Per-rank buffers for one slice of rows, grown once and reused every step.
struct Batch {
  std::vector<float> x;           // (n, D)
  std::vector<int32_t> labels;    // (n)
  std::vector<float> targets;     // (n) regression targets
  std::vector<float> mse_target;  // (n, O) one-hot labels or targets, for MSE
  std::vector<float> dout;        // (n, O)

  void load(const Dataset& data, const Split& split, std::span<const int64_t> idx) {
    const size_t n = idx.size();
    x.resize(n * data.features);
    const bool classify = data.task == Task::classification;
    labels.resize(classify ? n : 0);
    targets.resize(classify ? 0 : n);
    gather_rows(split, idx, x, labels, targets);
  }

  // Loss summed over the rows; writes dout scaled by grad_scale unless it is null.
  LossSum loss(const Dataset& data, std::span<const float> out, int64_t n, int64_t o, bool mse_loss,
               float grad_scale, bool want_grad) {
    float* d = nullptr;
    if (want_grad) {
      dout.resize(n * o);
      d = dout.data();
    }
    if (!mse_loss) return softmax_cross_entropy(out.data(), labels.data(), n, o, grad_scale, d);
    mse_target.assign(n * o, 0.0f);
    if (data.task == Task::classification) {
      for (int64_t i = 0; i < n; ++i)
        mse_target[i * o + labels[i]] = 1.0f;
    } else {
      std::copy(targets.begin(), targets.end(), mse_target.begin());
    }
    return mse(out.data(), mse_target.data(), n, o, grad_scale, d);
  }
};

}  // namespace

bool uses_mse(const ModelSpec& spec) {
  return spec.kind == ModelSpec::Kind::linear;
}

int64_t model_outputs(const ModelSpec& spec, const Dataset& data) {
  return data.task == Task::classification ? data.classes : 1;
}

int64_t total_steps(const TrainConfig& config, const Dataset& data) {
  if (config.steps > 0) return config.steps;
  const int64_t per_epoch = (data.train.size() + config.global_batch - 1) / config.global_batch;
  return per_epoch * config.epochs;
}

void validate(const TrainConfig& config, const Dataset& data) {
  if (config.global_batch < 1)
    throw UsageError(
        fmt::format("--batch {}: the global batch needs at least 1 sample", config.global_batch));
  if (config.global_batch > data.train.size())
    throw UsageError(
        fmt::format("--batch {} is larger than the {} training samples of {}; use "
                    "at most {}",
                    config.global_batch, data.train.size(), data.name, data.train.size()));
  if (config.steps < 0 || config.epochs < 0 || (config.steps == 0 && config.epochs == 0))
    throw UsageError("--steps or --epochs must be at least 1");
  if (config.steps > 100'000'000 || config.epochs > 1'000'000)
    throw UsageError("--steps above 1e8 or --epochs above 1e6 would not finish; use fewer");
  if (config.eval_every < 0) throw UsageError("--eval-every must be 0 (each epoch) or more");
  if (data.task == Task::regression && !uses_mse(config.model))
    throw UsageError(
        fmt::format("--model {} is a classifier but the data are a regression "
                    "task; use --model linear",
                    config.model.str()));
}

Evaluation evaluate(Communicator& comm, Mlp& model, const Dataset& data, const Split& split,
                    bool mse_loss) {
  const int64_t o = model.sizes().back();
  auto [begin, end] = DataParallelSampler::slice(split.size(), comm.rank(), comm.size());
  constexpr int64_t kChunk = 1024;  // rows per forward: bounds the workspace
  std::vector<int64_t> idx;
  Batch batch;
  double loss_sum = 0, correct = 0;
  for (int64_t lo = begin; lo < end; lo += kChunk) {
    const int64_t hi = std::min(end, lo + kChunk);
    idx.resize(hi - lo);
    for (int64_t i = lo; i < hi; ++i)
      idx[i - lo] = i;
    batch.load(data, split, idx);
    auto out = model.forward(batch.x.data(), hi - lo);
    LossSum s = batch.loss(data, out, hi - lo, o, mse_loss, 1.0f, false);
    loss_sum += s.loss;
    correct += static_cast<double>(s.correct);
  }
  std::vector<float> sums{static_cast<float>(loss_sum), static_cast<float>(correct)};
  all_reduce(comm, sums, ReduceOp::SUM);
  Evaluation e;
  const double n = static_cast<double>(std::max<int64_t>(split.size(), 1));
  e.loss = sums[0] / n;
  if (data.task == Task::classification) e.accuracy = sums[1] / n;
  return e;
}

TrainResult train(Communicator& comm, const Dataset& data, const TrainConfig& config,
                  const std::vector<NamedTensor>* init, const TrainHooks& hooks,
                  const TrainState* resume) {
  validate(config, data);
  const bool mse_loss = uses_mse(config.model);
  const bool classify = data.task == Task::classification;
  const int64_t o = model_outputs(config.model, data);
  // Two extra floats ride along with the gradients: the loss sum and the correct count.
  constexpr int64_t kExtra = 2;
  Mlp model = Mlp::from_spec(config.model, data.features, o, kExtra);
  Sgd sgd(config.sgd, model.num_params());
  DataParallelSampler sampler(data.train.size(), config.global_batch, config.shuffle, config.seed);
  const int64_t steps = total_steps(config, data);
  const int64_t p = model.num_params();
  TrainResult result;
  int64_t first_step = 0;
  if (resume) {
    if (resume->step < 0 || resume->step > steps)
      throw UsageError(fmt::format(
          "the checkpoint is at step {}, beyond this run's {} steps; resume with --steps {} "
          "or more",
          resume->step, steps, resume->step));
    model.load_state(resume->params, "checkpoint");
    if (!resume->momentum.empty()) sgd.set_momentum_buffer(resume->momentum, "checkpoint");
    first_step = resume->step;
    result.steps = resume->step;
    result.final_loss = resume->loss;
  } else if (init) {
    model.load_state(*init, "--init");
  } else {
    model.init(config.seed);
  }
  broadcast(comm, model.values(), 0);  // DDP: every rank starts from rank 0's parameters
  // --device cuda: the device holds the working copy of parameters, momentum and data.
  std::unique_ptr<ComputeDevice> device;
  if (config.device) {
    device = config.device(comm, model.sizes(), config.sgd, kExtra);
    result.device_all_reduce = device->all_reduce_name();
    device->load_data(data);
    device->set_params(model.values());
    if (sgd.has_momentum_buffer()) device->set_momentum(sgd.momentum_buffer());
  }
  auto pull_from_device = [&] {  // into model and sgd, for checkpoints and the result
    if (!device) return;
    device->get_params(model.values());
    std::vector<float> momentum(static_cast<size_t>(p));
    if (device->get_momentum(momentum)) sgd.set_momentum_buffer(momentum, "the device");
  };
  Batch batch;
  const Clock::time_point t0 = Clock::now();

  // Multiply-adds per sample through every Linear layer: forward costs 2 flops each,
  // backward about 4, the update about 4 per parameter. Backends use it for model time.
  double macs = 0;
  for (size_t l = 0; l + 1 < model.sizes().size(); ++l)
    macs += double(model.sizes()[l]) * double(model.sizes()[l + 1]);

  for (int64_t step = first_step; step < steps; ++step) {
    comm.on_step(step + 1);
    const Clock::time_point step_start = Clock::now();
    const uint64_t bytes_before = comm.bytes_sent();
    comm.emit(
        {.kind = EventKind::step_begin, .seq = static_cast<uint64_t>(step + 1), .op = "step"});
    auto global = sampler.batch(step);
    const int64_t b = static_cast<int64_t>(global.indices.size());
    auto [lo, hi] = DataParallelSampler::slice(b, comm.rank(), comm.size());
    const int64_t n = hi - lo;

    // Forward and backward on this rank's slice; the gradient is pre-scaled by 1/B so the
    // all_reduce SUM below yields the gradient of the mean loss over the global batch.
    comm.emit({.kind = EventKind::compute_begin, .op = "forward_backward"});
    model.zero_grad();
    std::span<float> grads = model.grad_buffer();
    if (device) {
      grads = device->gradients(global.indices.subspan(lo, n), 1.0f / static_cast<float>(b));
    } else if (n > 0) {
      batch.load(data, data.train, global.indices.subspan(lo, n));
      auto out = model.forward(batch.x.data(), n);
      LossSum s = batch.loss(data, out, n, o, mse_loss, 1.0f / static_cast<float>(b), true);
      model.backward(batch.x.data(), batch.dout.data(), n);
      grads[p] = static_cast<float>(s.loss);
      grads[p + 1] = static_cast<float>(s.correct);
    }
    comm.on_compute(std::chrono::duration<double>(Clock::now() - step_start).count(),
                    6.0 * macs * double(n));
    comm.emit({.kind = EventKind::compute_end, .op = "forward_backward"});
    const Clock::time_point comm_start = Clock::now();
    const double forward_backward_s =
        std::chrono::duration<double>(comm_start - step_start).count();
    if (!result.device_all_reduce.empty()) {
      // NCCL sums on the GPUs: no message crosses the Communicator, the trace still shows
      // the collective.
      comm.emit(
          {.kind = EventKind::collective_begin, .bytes = grads.size_bytes(), .op = "all_reduce"});
      device->all_reduce(grads);
      comm.emit(
          {.kind = EventKind::collective_end, .bytes = grads.size_bytes(), .op = "all_reduce"});
    } else {
      all_reduce(comm, grads, ReduceOp::SUM, {.algorithm = config.allreduce});
    }
    const double comm_s = seconds_since(comm_start);

    const Clock::time_point update_start = Clock::now();
    comm.emit({.kind = EventKind::compute_begin, .op = "update"});
    float extra[kExtra];  // the reduced loss sum and correct count
    if (device) {
      device->update(extra);
    } else {
      sgd.step(model.values(), model.grads());
      std::copy_n(grads.begin() + p, kExtra, extra);
    }
    const double update_s = seconds_since(update_start);
    comm.on_compute(update_s, 4.0 * double(p));
    comm.emit({.kind = EventKind::compute_end, .op = "update"});

    StepMetrics m;
    m.step = step + 1;
    m.epoch = global.epoch;
    m.loss = extra[0] / static_cast<double>(b);
    if (classify) m.train_accuracy = extra[1] / static_cast<double>(b);
    m.comm_s = comm_s;
    m.compute_s = forward_backward_s + update_s;
    m.bytes_sent = comm.bytes_sent() - bytes_before;

    const bool epoch_end = global.index_in_epoch == sampler.batches_per_epoch() - 1;
    const bool eval_now = step + 1 == steps ||
                          (config.eval_every > 0 ? (step + 1) % config.eval_every == 0 : epoch_end);
    if (eval_now) {
      Evaluation e = device ? evaluate_on_device(comm, *device, data)
                            : evaluate(comm, model, data, data.test, mse_loss);
      m.test_loss = e.loss;
      m.test_accuracy = e.accuracy;
      result.test_loss = e.loss;
      result.test_accuracy = e.accuracy;
    }
    m.wall_s = seconds_since(t0);
    m.model_s = comm.model_s();
    comm.emit({.kind = EventKind::step_end, .seq = static_cast<uint64_t>(step + 1), .op = "step"});
    result.compute_s += m.compute_s;
    result.comm_s += m.comm_s;
    result.bytes_sent += m.bytes_sent;
    result.final_loss = m.loss;
    result.steps = step + 1;
    if (hooks.on_step) hooks.on_step(m);
    if (hooks.on_checkpoint && hooks.checkpoint_every > 0 &&
        (step + 1) % hooks.checkpoint_every == 0) {
      pull_from_device();
      TrainState state{.step = step + 1,
                       .epoch = global.epoch,
                       .batch_in_epoch = global.index_in_epoch,
                       .loss = m.loss,
                       .params = model.state()};
      if (sgd.has_momentum_buffer()) {
        auto buffer = sgd.momentum_buffer();
        state.momentum.assign(buffer.begin(), buffer.end());
      }
      hooks.on_checkpoint(state);
    }
  }
  result.wall_s = seconds_since(t0);
  result.world = comm.size();
  result.model_s = comm.model_s();
  pull_from_device();
  result.params = model.state();
  return result;
}

}  // namespace dsgd
