// Lesson 13: PyTorch's DistributedDataParallel, piece by piece. What DDP(model) does at
// construction (rank 0's parameters to every rank), the tutorial's hand-written
// average_gradients (one all_reduce per parameter tensor) beside DDP's one flat bucket,
// DDP's buckets all-reduced while backward goes on (the real trainer), and no_sync (gradient
// accumulation with one all_reduce for several micro-batches). R = ranks, P = parameters.
#include <algorithm>
#include <vector>

#include "core/comm/collectives.h"
#include "core/data/sampler.h"
#include "core/nn/sgd.h"
#include "core/train/trainer.h"
#include "lessons/cluster_runs.h"
#include "lessons/lesson.h"
#include "lessons/training.h"
#include "sim/cluster.h"

namespace dsgd::lessons {
namespace {

constexpr int64_t kBatch = 256;  // the global batch B
constexpr int kSteps = 10;
constexpr float kLr = 0.1f;
constexpr double kLatency = 1e-3, kBandwidth = 125e6;  // 1 ms, 1 Gbit/s

// How a step sums the ranks' gradients.
enum class Way {
  per_tensor,  // the tutorial's average_gradients: one all_reduce per parameter tensor
  flat,        // DDP with one bucket: one all_reduce of every gradient
  each_micro,  // two micro-batches, an all_reduce after each
  no_sync,     // two micro-batches, the first under no_sync: one all_reduce
};

struct WayResult {
  std::vector<float> params;  // rank 0's after kSteps
  double bytes_per_step = 0, model_ms_per_step = 0;
};

sim::ClusterOptions slow_cluster(int world) {
  sim::ClusterOptions options;
  options.nodes = world;
  options.network.link.latency_s = kLatency;
  options.network.link.bandwidth_Bps = kBandwidth;
  return options;
}

// One step's gradients on this rank, summed over the ranks `way`'s way (each pre-scaled by
// 1/B, so the sum is the gradient of the global batch's mean loss).
void sum_gradients(Communicator& comm, Model& model, const Dataset& data,
                   std::span<const int64_t> rows, float scale, Way way) {
  if (way == Way::each_micro || way == Way::no_sync) {
    const size_t half = rows.size() / 2;
    forward_backward(model, data, rows.first(half), scale);
    if (way == Way::no_sync) {  // with model.no_sync(): the gradients stay local, and add up
      forward_backward(model, data, rows.subspan(half), scale);
      all_reduce(comm, model.grads(), ReduceOp::SUM);
      return;
    }
    all_reduce(comm, model.grads(), ReduceOp::SUM);  // each backward's all_reduce
    const std::vector<float> first(model.grads().begin(), model.grads().end());
    model.zero_grad();
    forward_backward(model, data, rows.subspan(half), scale);
    all_reduce(comm, model.grads(), ReduceOp::SUM);
    for (size_t i = 0; i < first.size(); ++i)
      model.grads()[i] += first[i];
    return;
  }
  forward_backward(model, data, rows, scale);
  if (way == Way::flat) {
    all_reduce(comm, model.grads(), ReduceOp::SUM);
    return;
  }
  for (const ParamInfo& p : model.params())  // for param in model.parameters(): all_reduce
    all_reduce(comm, model.grads().subspan(size_t(p.offset), size_t(p.numel)), ReduceOp::SUM);
}

WayResult train_way(const Dataset& data, uint64_t seed, int world, Way way) {
  WayResult result;
  sim::ClusterOptions options = slow_cluster(world);
  sim::SimControl control;  // model time does not depend on the clock's speed
  control.set_speed(50);
  options.control = &control;
  sim::run_cluster(options, [&](Communicator& comm) {
    Model model = Model::from_spec(ModelSpec::parse("mlp:64,64"), data.features, data.classes);
    model.init(seed);
    Sgd sgd({.lr = kLr}, model.num_params());
    DataParallelSampler sampler(data.train.size(), kBatch, false, seed);
    const double macs = model.macs_per_sample();
    for (int step = 0; step < kSteps; ++step) {
      auto batch = sampler.batch(step);
      const auto b = static_cast<int64_t>(batch.indices.size());
      auto [lo, hi] = DataParallelSampler::slice(b, comm.rank(), comm.size());
      model.zero_grad();
      sum_gradients(comm, model, data, batch.indices.subspan(lo, hi - lo), 1.0f / float(b), way);
      comm.on_compute(0, 6 * macs * double(hi - lo));
      sgd.step(model.values(), model.grads());
    }
    if (comm.rank() != 0) return;
    result.params.assign(model.values().begin(), model.values().end());
    result.bytes_per_step = double(comm.bytes_sent()) / kSteps;
    result.model_ms_per_step = comm.model_s() * 1e3 / kSteps;
  });
  return result;
}

// DDP's constructor: every rank's own random start, then rank 0's everywhere.
void show_wrapper(LessonContext& ctx, const Dataset& data) {
  Communicator& comm = ctx.comm();
  Model model = Model::from_spec(ModelSpec::parse("mlp:64,64"), data.features, data.classes);
  model.init(ctx.seed() + uint64_t(comm.rank()));  // no torch.manual_seed: each its own
  ctx.print_tr("before DDP(model): first weight {:+.5f}", "DDP(model) 之前：第一个权重 {:+.5f}",
               model.values()[0]);
  ctx.next_group();
  broadcast(comm, model.values(), 0);  // what DDP's constructor does
  ctx.print_tr("after:            first weight {:+.5f}", "之后：            第一个权重 {:+.5f}",
               model.values()[0]);
}

void show_row(LessonContext& ctx, const char* en, const char* zh, const WayResult& r,
              const WayResult& reference) {
  ctx.say("  {:<36} {:>10.0f} {:>8.2f}   {}", ctx.tr(en, zh), r.bytes_per_step, r.model_ms_per_step,
          describe_difference(max_abs_difference(r.params, reference.params), ctx.lang()));
}

void show_table_head(LessonContext& ctx, const Dataset& data) {
  const int64_t params =
      Model::from_spec(ModelSpec::parse("mlp:64,64"), data.features, data.classes).num_params();
  ctx.say_tr("R = {}, a = 1 ms, B = 1 Gbit/s; mlp:64,64 (6 tensors, P = {}), batch {}, {} steps",
             "R = {}，a = 1 ms，B = 1 Gbit/s；mlp:64,64（6 个张量，P = {}），批量 {}，{} 步",
             ctx.comm().size(), params, kBatch, kSteps);
  ctx.say("  {:<36} {:>10} {:>8}   {}", ctx.tr("way", "做法"), ctx.tr("bytes/step", "字节/步"),
          ctx.tr("ms/step", "毫秒/步"),
          ctx.tr("parameters against the first row", "参数与第一行相比"));
}

// The real trainer, one all_reduce after backward against 1 MB buckets during it, on fast
// and slow links.
void show_buckets(LessonContext& ctx, const Dataset& data) {
  TrainConfig config;
  config.model = ModelSpec::parse("mlp:512,512,512,512");
  config.global_batch = 512;
  config.sgd = {.lr = 0.05f};
  config.seed = ctx.seed();
  const int world = ctx.comm().size();
  ctx.say_tr("mlp:512,512,512,512 (P = 0.81 M, 3.2 MB of gradients), batch 512, R = {}, 1 Gbit/s",
             "mlp:512,512,512,512（P = 0.81 M，梯度 3.2 MB），批量 512，R = {}，1 Gbit/s", world);
  ctx.say("  {:<9} {:>26} {:>26}", ctx.tr("latency", "延迟"),
          ctx.tr("one all_reduce after", "反向传播后一次全归约"),
          ctx.tr("1 MB buckets", "1 MB 的桶"));
  for (double latency : {1e-4, kLatency}) {
    sim::ClusterOptions options = slow_cluster(world);
    options.network.link.latency_s = latency;
    config.bucket_bytes = 0;
    const double whole = step_model_s(data, config, options);
    config.bucket_bytes = 1'000'000;
    const double buckets = step_model_s(data, config, options);
    ctx.say("  {:<9} {:>23.2f} ms {:>16.2f} ms ({:+.0f}%)", fmt::format("{:g} ms", latency * 1e3),
            whole * 1e3, buckets * 1e3, 100 * (buckets / whole - 1));
  }
}

}  // namespace

void lesson_13(LessonContext& ctx) {
  Communicator& comm = ctx.comm();
  const Dataset& data = lesson_synthetic(ctx);

  ctx.section("wrapper");
  show_wrapper(ctx, data);
  ctx.show_messages(false);  // the runs below send hundreds of messages; the table says it

  // DDP's one all_reduce per step: the first row of both tables (rank 0 runs them).
  const WayResult flat =
      comm.rank() == 0 ? train_way(data, ctx.seed(), comm.size(), Way::flat) : WayResult{};

  ctx.section("average");
  if (comm.rank() == 0) {
    show_table_head(ctx, data);
    show_row(ctx, "DDP, one bucket", "DDP，一个桶", flat, flat);
    show_row(ctx, "average_gradients (one per tensor)", "average_gradients（每个张量一次）",
             train_way(data, ctx.seed(), comm.size(), Way::per_tensor), flat);
  }

  ctx.section("buckets");
  if (comm.rank() == 0) show_buckets(ctx, data);

  ctx.section("no-sync");
  if (comm.rank() == 0) {
    show_table_head(ctx, data);
    show_row(ctx, "one batch, one all_reduce", "整批一次，一次全归约", flat, flat);
    show_row(ctx, "2 micro-batches, both synced", "2 个微批，各归约一次",
             train_way(data, ctx.seed(), comm.size(), Way::each_micro), flat);
    show_row(ctx, "2 micro-batches, no_sync on the 1st", "2 个微批，第 1 个在 no_sync 中",
             train_way(data, ctx.seed(), comm.size(), Way::no_sync), flat);
  }

  ctx.section("next");
}

}  // namespace dsgd::lessons
