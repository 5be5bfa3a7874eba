// Lesson 12: what distributing training buys and what it costs, each shown by a run rather
// than asserted. Rank 0 trains the same model on simulated clusters of its own: one node
// against R on a fast link (speed), R on a slow link (communication), R with one slow rank
// (coordination), R with a rank that dies (reliability); and counts the parameters each
// rank holds when the model is split (memory). R = ranks.
#include <algorithm>
#include <optional>
#include <vector>

#include "core/errors.h"
#include "core/train/trainer.h"
#include "lessons/cluster_runs.h"
#include "lessons/lesson.h"
#include "lessons/training.h"
#include "sim/cluster.h"

namespace dsgd::lessons {
namespace {

TrainConfig lesson_config(uint64_t seed) {
  TrainConfig config;
  config.model = ModelSpec::parse("mlp:256,256,256");
  config.global_batch = 512;
  config.sgd = {.lr = 0.05f, .momentum = 0.9f};
  config.seed = seed;
  return config;
}

sim::ClusterOptions cluster(int world, double latency_s, double bandwidth_Bps) {
  sim::ClusterOptions options;
  options.nodes = world;
  options.network.link.latency_s = latency_s;
  options.network.link.bandwidth_Bps = bandwidth_Bps;
  return options;
}

constexpr double kFastLatency = 10e-6, kFastBandwidth = 1.25e9;  // 0.01 ms, 10 Gbit/s
constexpr double kSlowLatency = 1e-3, kSlowBandwidth = 125e6;    // 1 ms, 1 Gbit/s

// Step times on one node and on R nodes over a fast link: the speed-up.
double show_speed(LessonContext& ctx, const Dataset& data, const TrainConfig& config, int world) {
  const double one = step_model_s(data, config, cluster(1, kFastLatency, kFastBandwidth));
  const double many = step_model_s(data, config, cluster(world, kFastLatency, kFastBandwidth));
  ctx.say_tr(
      "1 node: {:.2f} ms per step; {} nodes (0.01 ms, 10 Gbit/s): {:.2f} ms; speed-up {:.1f}x",
      "1 个节点：每步 {:.2f} ms；{} 个节点（0.01 ms，10 Gbit/s）：{:.2f} ms；加速比 {:.1f}x",
      one * 1e3, world, many * 1e3, one / many);
  return one;
}

// R nodes on a slow link: how much of a step is communication (the compute is 1/R of one
// node's step).
void show_overhead(LessonContext& ctx, const Dataset& data, const TrainConfig& config, int world,
                   double one) {
  const double slow = step_model_s(data, config, cluster(world, kSlowLatency, kSlowBandwidth));
  const double compute = one / world;
  ctx.say_tr(
      "{} nodes (1 ms, 1 Gbit/s): {:.2f} ms per step, of which {:.2f} ms compute and {:.2f} ms "
      "({:.0f}%) communication; speed-up {:.1f}x",
      "{} 个节点（1 ms，1 Gbit/s）：每步 {:.2f} ms，其中计算 {:.2f} ms，通信 {:.2f} ms（{:.0f}%）；"
      "加速比 {:.1f}x",
      world, slow * 1e3, compute * 1e3, (slow - compute) * 1e3, 100 * (slow - compute) / slow,
      one / slow);
}

// R nodes on the fast link, the last one 3 times slower.
void show_straggler(LessonContext& ctx, const Dataset& data, const TrainConfig& config, int world) {
  const double even = step_model_s(data, config, cluster(world, kFastLatency, kFastBandwidth));
  sim::ClusterOptions options = cluster(world, kFastLatency, kFastBandwidth);
  options.node_overrides[world - 1].straggler = 3;
  const double slowed = step_model_s(data, config, options);
  ctx.say_tr(
      "{} nodes: {:.2f} ms per step; when rank {} computes 3 times as slowly: {:.2f} ms "
      "for every rank",
      "{} 个节点：每步 {:.2f} ms；秩 {} 的计算慢到 3 倍时：每个秩都要 {:.2f} ms", world, even * 1e3,
      world - 1, slowed * 1e3);
}

// R nodes; rank 1 dies as step 3 begins.
void show_crash(LessonContext& ctx, const Dataset& data, TrainConfig config, int world) {
  config.steps = 10;
  sim::ClusterOptions options = cluster(world, kFastLatency, kFastBandwidth);
  options.node_overrides[1].crash_at_step = 3;
  std::optional<CommError> error;
  try {
    sim::run_cluster(options, [&](Communicator& comm) { train(comm, data, config); });
  } catch (const CommError& e) {
    error = e;
  }
  if (error)
    ctx.say_tr("rank 1 died at step 3 of 10: every other rank stopped too (CommError, exit code 3)",
               "秩 1 在第 3 步（共 10 步）时死去：其余的秩也都停了下来（CommError，退出码 3）");
  else
    ctx.say("(the run went on?)");
}

// Parameters per rank: all of them with data parallelism, one layer's with the model split
// by layers (lesson 8). The synthetic data have 32 features and 10 classes.
void show_memory(LessonContext& ctx, const TrainConfig& config) {
  std::vector<int64_t> sizes{32};
  sizes.insert(sizes.end(), config.model.hidden.begin(), config.model.hidden.end());
  sizes.push_back(10);
  int64_t total = 0, largest_layer = 0;
  for (size_t i = 0; i + 1 < sizes.size(); ++i) {
    const int64_t layer = sizes[i] * sizes[i + 1] + sizes[i + 1];  // weight and bias
    total += layer;
    largest_layer = std::max(largest_layer, layer);
  }
  ctx.say_tr(
      "{}: {} parameters on every rank (data parallel); at most {} ({:.0f}%) on a rank "
      "with one layer per rank (model parallel, {} ranks)",
      "{0}：数据并行时每个秩都有全部 {1} 个参数；模型并行、每个秩一层时（{4} 层分在 {4} 个秩上），"
      "一个秩最多 {2} 个（{3:.0f}%）",
      config.model.str(), total, largest_layer, 100.0 * largest_layer / total, sizes.size() - 1);
}

}  // namespace

void lesson_12(LessonContext& ctx) {
  ctx.show_messages(false);
  const int world = ctx.size();
  const Dataset& data = lesson_synthetic(ctx);
  const TrainConfig config = lesson_config(ctx.seed());
  double one = 0;
  ctx.section("speed");
  if (ctx.rank() == 0) one = show_speed(ctx, data, config, world);
  ctx.section("overhead");
  if (ctx.rank() == 0) show_overhead(ctx, data, config, world, one);
  ctx.section("coordination");
  if (ctx.rank() == 0) show_straggler(ctx, data, config, world);
  ctx.section("reliability");
  if (ctx.rank() == 0) show_crash(ctx, data, config, world);
  ctx.section("memory");
  if (ctx.rank() == 0) show_memory(ctx, config);
  ctx.section("verdict");
  ctx.section("next");
}

}  // namespace dsgd::lessons
