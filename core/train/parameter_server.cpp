// Notation: R ranks, S servers, W = R - S workers, P parameters, n = a shard's size.
#include "core/train/parameter_server.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "core/data/sampler.h"
#include "core/errors.h"
#include "core/train/rank_setup.h"

namespace dsgd {

std::pair<int64_t, int64_t> ServerLayout::shard(int j, int64_t params) const {
  return DataParallelSampler::slice(params, j, servers);
}

std::vector<RankPair> server_pairs(ServerLayout layout) {
  std::vector<RankPair> pairs;
  for (int w = 0; w < layout.workers; ++w)
    for (int j = 0; j < layout.servers; ++j)
      pairs.push_back({w, layout.server_rank(j)});
  return pairs;
}

ServerLayout server_layout(int world, int servers) {
  if (servers < 1 || servers >= world)
    throw UsageError(fmt::format(
        "--parameter-servers {} of {} ranks leaves no worker: use 1 to {} servers, or more "
        "--nodes",
        servers, world, world - 1));
  return {.workers = world - servers, .servers = servers};
}

namespace {

constexpr int kTag = 0x5053;  // "PS": a user tag, below the collectives'

// Messages start with 64-bit integers, each carried bit for bit in two floats.
// Worker -> server: the step it pulls for (-1: none, its last push), the shard version it
// read, whether a gradient follows (1) or not (0, before its first step); then n floats.
// Server -> worker: the shard's version, the staleness of the worker's last push; n floats.
constexpr size_t kUpHeader = 6, kDownHeader = 4;

void put(std::span<float> message, size_t field, int64_t value) {
  std::memcpy(message.data() + 2 * field, &value, sizeof value);
}

int64_t get(std::span<const float> message, size_t field) {
  int64_t value = 0;
  std::memcpy(&value, message.data() + 2 * field, sizeof value);
  return value;
}

// One server: its shard, the SGD state for it, and who may start which step.
class Server {
 public:
  Server(Communicator& comm, const TrainConfig& config, ServerLayout layout,
         std::span<const float> shard)
      : comm_(comm),
        config_(config),
        layout_(layout),
        values_(shard.begin(), shard.end()),
        sgd_(config.sgd, static_cast<int64_t>(shard.size())),
        inbox_(kUpHeader + shard.size()),
        pushed_(size_t(layout.workers), 0),
        waiting_(size_t(layout.workers), -1),
        last_staleness_(size_t(layout.workers), 0),
        outbox_(size_t(layout.workers), std::vector<float>(kDownHeader + shard.size())),
        sending_(size_t(layout.workers)) {}

  // Until every worker has sent its steps + 1 messages.
  void run(int64_t steps) {
    comm_.on_step(1);
    for (int64_t m = 0; m < layout_.workers * (steps + 1); ++m) {
      const Status status = comm_.recv(inbox_, kAnySource, kTag);
      const int w = status.source;
      started_ += get(inbox_, 2) == 0;  // a worker's first message carries no gradient
      const int64_t before = slowest();
      if (get(inbox_, 2)) apply(w, get(inbox_, 1));
      // A server's step is the slowest worker's: a fault at step k fires as it begins.
      if (slowest() > before) comm_.on_step(slowest() + 1);
      waiting_[size_t(w)] = get(inbox_, 0);
      answer_pulls();
    }
    for (Request& r : sending_)
      if (r.valid()) comm_.wait(r);
  }

  std::span<const float> values() const { return values_; }
  const StalenessStats& stats() const { return stats_; }

 private:
  // One SGD step on the shard with the gradient in the inbox, read at version `read`.
  void apply(int w, int64_t read) {
    const Clock::time_point start = Clock::now();
    comm_.emit({.kind = EventKind::compute_begin, .op = "update"});
    const int64_t staleness = version_ - read;
    sgd_.step(values_, std::span<const float>(inbox_).subspan(kUpHeader));
    ++version_;
    ++pushed_[size_t(w)];
    last_staleness_[size_t(w)] = staleness;
    stats_.mean += (double(staleness) - stats_.mean) / double(++stats_.updates);
    stats_.max = std::max(stats_.max, staleness);
    comm_.on_compute(seconds_since(start), 4.0 * double(values_.size()));
    comm_.emit({.kind = EventKind::compute_end, .op = "update"});
  }

  // Every worker starts from the same parameters, as synchronous SGD's broadcast gives
  // them: no pull is answered before every worker has asked for its first (else a fast
  // worker's first gradient could land before a slow one has read the start).
  bool may_start(int64_t step) const {
    if (started_ < layout_.workers) return false;
    return config_.max_staleness < 0 || slowest() >= step - config_.max_staleness;
  }

  // The steps the slowest worker has pushed.
  int64_t slowest() const { return *std::min_element(pushed_.begin(), pushed_.end()); }

  // Sends the shard to every worker whose pull the bound now allows.
  void answer_pulls() {
    for (int w = 0; w < layout_.workers; ++w) {
      const int64_t step = waiting_[size_t(w)];
      if (step < 0 || !may_start(step)) continue;
      waiting_[size_t(w)] = -1;
      Request& previous = sending_[size_t(w)];
      if (previous.valid()) comm_.wait(previous);  // the worker took it before asking again
      std::vector<float>& out = outbox_[size_t(w)];
      put(out, 0, version_);
      put(out, 1, last_staleness_[size_t(w)]);
      std::copy(values_.begin(), values_.end(), out.begin() + kDownHeader);
      previous = comm_.isend(out, w, kTag);
    }
  }

  Communicator& comm_;
  const TrainConfig& config_;
  ServerLayout layout_;
  std::vector<float> values_;
  Sgd sgd_;
  std::vector<float> inbox_;
  int64_t version_ = 0;           // updates applied to the shard
  int started_ = 0;               // workers whose first message has come
  std::vector<int64_t> pushed_;   // per worker: gradients applied
  std::vector<int64_t> waiting_;  // per worker: the step it asked for, or -1
  std::vector<int64_t> last_staleness_;
  std::vector<std::vector<float>> outbox_;  // per worker: the answer in flight
  std::vector<Request> sending_;
  StalenessStats stats_;
};

// One worker's view of the run.
struct Worker {
  Communicator& comm;
  const Dataset& data;
  const TrainConfig& config;
  ServerLayout layout;
  ComputeDevice& device;
  DataParallelSampler sampler;
  double macs = 0;  // per sample, forward
  int64_t params = 0;
  std::vector<float> values;                 // (P) the parameters it computes with
  std::vector<std::vector<float>> up, down;  // per server
  std::vector<int64_t> read;                 // per server: the version pulled
  std::span<float> grads;                    // (P + extra) the last step's
};

// Pushes the last gradients (none before step 0) and, unless `step` is -1, pulls the
// parameters for `step`. Returns the staleness the first server reported for the last push.
int64_t exchange(Worker& w, int64_t step) {
  std::vector<Request> requests;
  for (int j = 0; j < w.layout.servers; ++j) {
    auto [lo, hi] = w.layout.shard(j, w.params);
    std::vector<float>& up = w.up[size_t(j)];
    put(up, 0, step);
    put(up, 1, w.read[size_t(j)]);
    put(up, 2, w.grads.empty() ? 0 : 1);
    if (!w.grads.empty())
      std::copy(w.grads.begin() + lo, w.grads.begin() + hi, up.begin() + kUpHeader);
    requests.push_back(w.comm.isend(up, w.layout.server_rank(j), kTag));
    if (step >= 0)
      requests.push_back(w.comm.irecv(w.down[size_t(j)], w.layout.server_rank(j), kTag));
  }
  for (Request& r : requests)
    w.comm.wait(r);
  if (step < 0) return 0;
  for (int j = 0; j < w.layout.servers; ++j) {
    auto [lo, hi] = w.layout.shard(j, w.params);
    const std::vector<float>& down = w.down[size_t(j)];
    w.read[size_t(j)] = get(down, 0);
    std::copy(down.begin() + kDownHeader, down.end(), w.values.begin() + lo);
  }
  return get(w.down[0], 1);
}

// One worker step: pull, then the gradient of this worker's slice of batch `step`.
StepMetrics worker_step(Worker& w, int64_t step) {
  const uint64_t bytes_before = w.comm.bytes_sent();
  const Clock::time_point start = Clock::now();
  StepMetrics m{.step = step + 1};
  const int64_t staleness = exchange(w, step);
  if (step > 0) m.staleness = staleness;
  w.device.set_params(w.values);
  m.comm_s = seconds_since(start);
  const DataParallelSampler::Batch global = w.sampler.batch(step);
  m.epoch = global.epoch;
  const int64_t b = static_cast<int64_t>(global.indices.size());
  auto [lo, hi] = DataParallelSampler::slice(b, w.comm.rank(), w.layout.workers);
  const Clock::time_point compute_start = Clock::now();
  w.comm.emit({.kind = EventKind::compute_begin, .op = "forward_backward"});
  w.grads = w.device.gradients(global.indices.subspan(lo, hi - lo), 1.0f / float(b));
  w.comm.on_compute(seconds_since(compute_start), 6.0 * w.macs * double(hi - lo));
  w.comm.emit({.kind = EventKind::compute_end, .op = "forward_backward"});
  m.compute_s = seconds_since(compute_start);
  const double rows = double(std::max<int64_t>(hi - lo, 1));
  m.loss = w.grads[size_t(w.params)] / rows;
  if (w.data.task == Task::classification) m.train_accuracy = w.grads[size_t(w.params) + 1] / rows;
  m.bytes_sent = w.comm.bytes_sent() - bytes_before;
  return m;
}

// Returns the last step's metrics, to be reported once the final evaluation is in.
StepMetrics run_worker(Worker& w, int64_t steps, const TrainHooks& hooks, TrainResult& result) {
  const Clock::time_point t0 = Clock::now();
  StepMetrics last;
  for (int64_t step = 0; step < steps; ++step) {
    w.comm.on_step(step + 1);
    w.comm.emit({.kind = EventKind::step_begin, .seq = uint64_t(step + 1), .op = "step"});
    StepMetrics m = worker_step(w, step);
    // Rank 0 evaluates alone, on the whole test split, the parameters it pulled.
    // (The last evaluation is everyone's, after the run.)
    if (w.comm.rank() == 0 && step + 1 < steps &&
        evaluates_after(w.config, step, steps, w.sampler.batch(step).index_in_epoch,
                        w.sampler.batches_per_epoch())) {
      const LossSum s = w.device.evaluate_test(0, w.data.test.size());
      const double n = double(std::max<int64_t>(w.data.test.size(), 1));
      m.test_loss = s.loss / n;
      if (w.data.task == Task::classification) m.test_accuracy = s.correct / n;
    }
    m.wall_s = seconds_since(t0);
    m.model_s = w.comm.model_s();
    w.comm.emit({.kind = EventKind::step_end, .seq = uint64_t(step + 1), .op = "step"});
    result.compute_s += m.compute_s;
    result.comm_s += m.comm_s;
    result.bytes_sent += m.bytes_sent;
    result.final_loss = m.loss;
    if (step + 1 == steps)
      last = m;
    else if (hooks.on_step)
      hooks.on_step(m);
  }
  exchange(w, -1);  // the last push
  return last;
}

// Every server's staleness figures, on every rank (float sums: exact up to 2^24 updates).
StalenessStats gather_staleness(Communicator& comm, const StalenessStats& own,
                                Algorithm algorithm) {
  std::vector<float> sums{float(own.updates), float(own.mean * double(own.updates))};
  std::vector<float> largest{float(own.max)};
  all_reduce(comm, sums, ReduceOp::SUM, {.algorithm = algorithm});
  all_reduce(comm, largest, ReduceOp::MAX, {.algorithm = algorithm});
  StalenessStats all{.updates = int64_t(sums[0]), .max = int64_t(largest[0])};
  all.mean = all.updates > 0 ? sums[1] / double(all.updates) : 0;
  return all;
}

}  // namespace

TrainResult train_with_servers(Communicator& comm, const Dataset& data, const TrainConfig& config,
                               const std::vector<NamedTensor>* init, const TrainHooks& hooks) {
  const ServerLayout layout = server_layout(comm.size(), config.parameter_servers);
  Model model =
      Model::from_spec(config.model, data.features, model_outputs(config.model, data), kExtra);
  Sgd unused(config.sgd, model.num_params());  // the servers' Sgd is per shard
  const int64_t steps = total_steps(config, data), p = model.num_params();
  const TrainingAlgorithms algorithms = training_algorithms(config, comm.size(), p);
  start(comm, config, steps, model, unused, init, nullptr, algorithms.broadcast);
  const std::unique_ptr<ComputeDevice> device = make_device(comm, config, data, model, unused);
  TrainResult result{.world = comm.size(), .steps = steps, .steps_run = steps};
  const Clock::time_point t0 = Clock::now();
  std::vector<float> values(model.values().begin(), model.values().end());
  std::optional<StepMetrics> last;
  std::optional<Server> server;
  if (layout.is_server(comm.rank())) {
    auto [lo, hi] = layout.shard(comm.rank() - layout.workers, p);
    server.emplace(comm, config, layout, std::span<const float>(values).subspan(lo, hi - lo));
    server->run(steps);
    std::fill(values.begin(), values.end(), 0.0f);
    std::copy(server->values().begin(), server->values().end(), values.begin() + lo);
  } else {
    Worker w{.comm = comm,
             .data = data,
             .config = config,
             .layout = layout,
             .device = *device,
             .sampler = DataParallelSampler(data.train.size(), config.global_batch, config.shuffle,
                                            config.seed),
             .macs = model.macs_per_sample(),
             .params = p,
             .values = values};
    for (int j = 0; j < layout.servers; ++j) {
      auto [lo, hi] = layout.shard(j, p);
      w.up.emplace_back(kUpHeader + size_t(hi - lo));
      w.down.emplace_back(kDownHeader + size_t(hi - lo));
    }
    w.read.assign(size_t(layout.servers), 0);
    last = run_worker(w, steps, hooks, result);
  }
  // Everyone again: the servers' shards (each rank adds zeros where it holds none, so the
  // sum is exact, over the pairs the run's other all-reduces use), then one evaluation.
  if (!server) std::fill(values.begin(), values.end(), 0.0f);
  all_reduce(comm, values, ReduceOp::SUM, {.algorithm = algorithms.gradients});
  result.staleness =
      gather_staleness(comm, server ? server->stats() : StalenessStats{}, algorithms.gradients);
  std::copy(values.begin(), values.end(), model.values().begin());
  device->set_params(model.values());
  const Evaluation e = evaluate(comm, *device, data, algorithms.evaluation);
  result.test_loss = e.loss;
  result.test_accuracy = e.accuracy;
  result.wall_s = seconds_since(t0);
  result.model_s = comm.model_s();
  if (last) {
    last->test_loss = e.loss;
    last->test_accuracy = e.accuracy;
    if (hooks.on_step) hooks.on_step(*last);
  }
  result.params = model.state();
  return result;
}

}  // namespace dsgd
