// Lesson 9: when a node lags or fails. In synchronous SGD every step waits for the slowest
// rank (a straggler slows everyone); a crashed rank stops the run for all; parameters saved
// part-way let a new run continue. Each experiment runs on a simulated cluster of its own,
// started by rank 0, with the faults of sim/node.h. R = ranks.
#include <vector>

#include "core/errors.h"
#include "core/train/trainer.h"
#include "lessons/lesson.h"
#include "lessons/training.h"
#include "sim/cluster.h"

namespace dsgd::lessons {
namespace {

TrainConfig lesson_config(uint64_t seed, int64_t steps) {
  TrainConfig config;
  config.model = ModelSpec::parse("mlp:64");
  config.global_batch = 256;
  config.sgd = {.lr = 0.1f, .momentum = 0.9f};
  config.steps = steps;
  config.seed = seed;
  return config;
}

std::vector<float> flat(const std::vector<NamedTensor>& params) {
  std::vector<float> out;
  for (const NamedTensor& t : params)
    out.insert(out.end(), t.tensor.span().begin(), t.tensor.span().end());
  return out;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i)
    d = std::max(d, double(std::abs(a[i] - b[i])));
  return d;
}

// Model seconds per step (between the hooks of steps 1 and 3) with rank R-1 slowed.
double step_model_s(const Dataset& data, uint64_t seed, int world, double slowdown) {
  sim::ClusterOptions options;
  options.nodes = world;
  options.node_overrides[world - 1].straggler = slowdown;
  double t1 = 0, t3 = 0;
  sim::run_cluster(options, [&](Communicator& comm) {
    TrainHooks hooks;
    if (comm.rank() == 0)
      hooks.on_step = [&](const StepMetrics& m) {
        if (m.step == 1) t1 = comm.model_s();
        if (m.step == 3) t3 = comm.model_s();
      };
    train(comm, data, lesson_config(seed, 4), nullptr, hooks);
  });
  return (t3 - t1) / 2;
}

// Trains on a cluster of `world` nodes; returns rank 0's result.
TrainResult train_on(int world, const Dataset& data, const TrainConfig& config,
                     const std::vector<NamedTensor>* init = nullptr) {
  TrainResult result;
  sim::run_cluster({.nodes = world}, [&](Communicator& comm) {
    TrainResult r = train(comm, data, config, init);
    if (comm.rank() == 0) result = std::move(r);
  });
  return result;
}

}  // namespace

void lesson_09(LessonContext& ctx) {
  Communicator& comm = ctx.comm();
  const int world = comm.size();
  ctx.show_messages(false);
  const Dataset& data = lesson_synthetic(ctx);

  ctx.section("straggler");
  if (comm.rank() == 0) {
    for (double slowdown : {1.0, 2.0, 4.0}) {
      const double t = step_model_s(data, ctx.seed(), world, slowdown);
      ctx.say_tr("rank {} computes {:g}x as long: {:.3f} ms per step",
                 "秩 {} 的计算时间 ×{:g}：每步 {:.3f} ms", world - 1, slowdown, t * 1e3);
    }
  }

  ctx.section("crash");
  if (comm.rank() == 0) {
    sim::ClusterOptions options;
    options.nodes = world;
    options.node_overrides[1].crash_at_step = 4;
    // Which step the survivors had finished when the abort reached them depends on thread
    // timing; the transcript says only what is deterministic: where rank 1 died, and how.
    try {
      sim::run_cluster(options,
                       [&](Communicator& c) { train(c, data, lesson_config(ctx.seed(), 10)); });
      ctx.say("(no failure?)");
    } catch (const CommError& e) {
      ctx.say_tr(
          "rank 1 died at step {} of 10; the run stopped: CommError, exit code {}, peer rank {}",
          "秩 1 在第 {} 步（共 10 步）时失效，运行停止：CommError，退出码 {}，责任方：秩 {}",
          *options.node_overrides[1].crash_at_step, e.exit_code(), e.peer());
    }
  }

  ctx.section("checkpoint");
  if (comm.rank() == 0) {
    const TrainResult whole = train_on(world, data, lesson_config(ctx.seed(), 20));
    const TrainResult first = train_on(world, data, lesson_config(ctx.seed(), 10));
    const TrainResult resumed = train_on(world, data, lesson_config(ctx.seed(), 10), &first.params);
    ctx.say_tr("20 steps in one run:        loss {:.4f}, test accuracy {:.1f}%",
               "一次训练 20 步：           损失 {:.4f}，测试准确率 {:.1f}%", whole.final_loss,
               100 * whole.test_accuracy.value_or(0));
    ctx.say_tr("10 steps, saved, 10 more:   loss {:.4f}, test accuracy {:.1f}%",
               "10 步，保存，再续训 10 步：损失 {:.4f}，测试准确率 {:.1f}%", resumed.final_loss,
               100 * resumed.test_accuracy.value_or(0));
    ctx.say(
        "{}: {}", ctx.tr("parameters of the two", "两者的参数"),
        describe_difference(max_abs_diff(flat(whole.params), flat(resumed.params)), ctx.lang()));
  }

  ctx.section("next");
}

}  // namespace dsgd::lessons
