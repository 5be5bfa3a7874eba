// Lesson 9: when a node lags or fails. In synchronous SGD every step waits for the slowest
// rank (a straggler slows everyone); a crashed rank stops the run for all; a checkpoint
// (parameters, momentum, step) lets a new run continue exactly where the last one stopped,
// and parameters alone do not; elastic membership lets the survivors go on by themselves;
// a parameter server does not wait at all, at the price of staleness. Each experiment runs
// on a simulated cluster of its own, started by rank 0, with the faults of sim/node.h.
// R = ranks.
#include <cstring>
#include <mutex>
#include <optional>
#include <vector>

#include "core/errors.h"
#include "core/train/trainer.h"
#include "lessons/cluster_runs.h"
#include "lessons/lesson.h"
#include "lessons/training.h"
#include "sim/cluster.h"
#include "sim/elastic.h"

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

// Model seconds per step with rank R-1 slowed `slowdown` times.
double straggler_step_s(const Dataset& data, uint64_t seed, int world, double slowdown) {
  sim::ClusterOptions options;
  options.nodes = world;
  options.node_overrides[world - 1].straggler = slowdown;
  return step_model_s(data, lesson_config(seed, 3), options);
}

// Trains on a cluster of `world` nodes; returns rank 0's result. `resume` continues from a
// checkpoint's state, as `dsgd train --resume` does; `init` starts from parameters alone.
TrainResult train_on(int world, const Dataset& data, const TrainConfig& config,
                     const std::vector<NamedTensor>* init = nullptr,
                     const TrainState* resume = nullptr) {
  TrainResult result;
  sim::run_cluster({.nodes = world}, [&](Communicator& comm) {
    TrainResult r = train(comm, data, config, init, {}, resume);
    if (comm.rank() == 0) result = std::move(r);
  });
  return result;
}

// A run like `dsgd train --checkpoint-every EVERY --crash 1@CRASH_STEP`: rank 0 keeps each
// checkpoint's state (in memory, where the command writes a file; none when every is 0);
// rank 1 dies as step crash_step begins. Returns the newest checkpoint; the CommError that
// stopped the run is in `error`.
TrainState run_until_crash(int world, const Dataset& data, const TrainConfig& config, int64_t every,
                           int64_t crash_step, std::optional<CommError>& error) {
  sim::ClusterOptions options;
  options.nodes = world;
  options.node_overrides[1].crash_at_step = crash_step;
  TrainState newest;
  try {
    sim::run_cluster(options, [&](Communicator& comm) {
      TrainHooks hooks;
      hooks.checkpoint_every = every;
      if (comm.rank() == 0) hooks.on_checkpoint = [&](const TrainState& s) { newest = s; };
      train(comm, data, config, nullptr, hooks);
    });
  } catch (const CommError& e) {
    error = e;
  }
  return newest;
}

void say_result(LessonContext& ctx, const char* en, const char* zh, const TrainResult& r) {
  ctx.say_tr(en, zh, r.final_loss, 100 * r.test_accuracy.value_or(0));
}

// "identical, bit for bit" when every float has the same bits, else describe_difference.
std::string compare_params(const TrainResult& a, const TrainResult& b, Lang lang) {
  const std::vector<float> x = flat_params(a.params), y = flat_params(b.params);
  if (x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0)
    return lang == Lang::zh ? "逐位完全相同" : "identical, bit for bit";
  return describe_difference(max_abs_difference(x, y), lang);
}

void show_crash_and_resume(LessonContext& ctx, const Dataset& data, const TrainResult& whole) {
  const int world = ctx.size();
  std::optional<CommError> error;
  const TrainState saved =
      run_until_crash(world, data, lesson_config(ctx.seed(), 20), 10, 15, error);
  if (error)
    ctx.say_tr("rank 1 died at step 15: CommError, exit code {}; newest checkpoint: step {}",
               "秩 1 在第 15 步失效：CommError，退出码 {}；最新的检查点：第 {} 步",
               error->exit_code(), saved.step);
  else
    ctx.say("(no failure?)");
  const TrainResult resumed = train_on(world, data, lesson_config(ctx.seed(), 20), nullptr, &saved);
  say_result(ctx, "20 steps without a crash:            loss {:.4f}, test accuracy {:.1f}%",
             "不崩溃，一次训练 20 步：         损失 {:.4f}，测试准确率 {:.1f}%", whole);
  say_result(ctx, "crash, resumed from step 10 to 20:   loss {:.4f}, test accuracy {:.1f}%",
             "崩溃后从第 10 步续训到第 20 步： 损失 {:.4f}，测试准确率 {:.1f}%", resumed);
  ctx.say("{}{}", ctx.tr("parameters of the two: ", "两者的参数："),
          compare_params(whole, resumed, ctx.lang()));
}

// Resumes from parameters alone (`--save`, then `--init`): momentum starts at zero and the
// data order from its first batch.
void show_parameters_only(LessonContext& ctx, const Dataset& data, const TrainResult& whole) {
  const int world = ctx.size();
  const TrainResult first = train_on(world, data, lesson_config(ctx.seed(), 10));
  const TrainResult restarted = train_on(world, data, lesson_config(ctx.seed(), 10), &first.params);
  say_result(ctx, "10 steps, --save, --init, 10 more:   loss {:.4f}, test accuracy {:.1f}%",
             "10 步，--save，--init，再训 10 步：损失 {:.4f}，测试准确率 {:.1f}%", restarted);
  ctx.say("{}{}",
          ctx.tr("parameters, against 20 steps in one run: ", "与一次训练 20 步相比，参数："),
          compare_params(whole, restarted, ctx.lang()));
}

// "1 rank", "3 ranks"; in Chinese "3 个秩".
std::string ranks_text(int n, Lang lang) {
  if (lang == Lang::zh) return fmt::format("{} 个秩", n);
  return fmt::format("{} {}", n, n == 1 ? "rank" : "ranks");
}

// An elastic run like `dsgd train --steps 20 --crash 1@15 --checkpoint-every 10 --elastic
// POLICY`, rank 0 keeping its checkpoints in memory: rank 0's result, the membership change,
// and the state the survivors went on from.
struct ElasticOutcome {
  TrainResult result;
  sim::MembershipChange change;
  std::optional<TrainState> from;
};
ElasticOutcome run_elastic_policy(int world, const Dataset& data, const TrainConfig& config,
                                  sim::ElasticPolicy policy) {
  sim::ClusterOptions options{.nodes = world};
  options.node_overrides[1].crash_at_step = 15;
  std::mutex mutex;
  std::optional<TrainState> newest;
  ElasticOutcome out;
  const auto round_fn = [&](Communicator& comm, const sim::ElasticRound& round) {
    TrainHooks hooks;
    sim::add_round_hooks(hooks, comm, round);
    if (comm.rank() == 0) {
      hooks.checkpoint_every = 10;
      hooks.on_checkpoint = [&](const TrainState& s) {
        std::lock_guard lock(mutex);
        newest = s;
      };
    }
    TrainResult r = train(comm, data, config, nullptr, hooks, round.resume);
    if (comm.rank() != 0) return;
    out.result = std::move(r);
    if (round.resume) out.from = *round.resume;
  };
  const auto changes =
      sim::run_elastic(options, {.policy = policy}, round_fn, [&] { return newest; });
  if (!changes.empty()) out.change = changes.front();
  return out;
}

// Both policies after the same crash; returns the in-process run.
ElasticOutcome show_elastic(LessonContext& ctx, const Dataset& data, const TrainResult& whole) {
  const int world = ctx.size();
  const TrainConfig config = lesson_config(ctx.seed(), 20);
  const ElasticOutcome restart =
      run_elastic_policy(world, data, config, sim::ElasticPolicy::restart);
  const ElasticOutcome kept =
      run_elastic_policy(world, data, config, sim::ElasticPolicy::in_process);
  ctx.say_tr("never crashed, {}: test accuracy {:.1f}%", "从未崩溃，{}：测试准确率 {:.1f}%",
             ranks_text(world, ctx.lang()), 100 * whole.test_accuracy.value_or(0));
  ctx.say_tr("restart, {} from the step-{} checkpoint: test accuracy {:.1f}%",
             "重启，{}从第 {} 步的检查点开始：测试准确率 {:.1f}%",
             ranks_text(restart.change.world, ctx.lang()), restart.change.resumed_step,
             100 * restart.result.test_accuracy.value_or(0));
  ctx.say_tr("in-process, {} with the state rank 0 had committed: test accuracy {:.1f}%",
             "进程内，{}带着秩 0 提交的状态继续：测试准确率 {:.1f}%",
             ranks_text(kept.change.world, ctx.lang()),
             100 * kept.result.test_accuracy.value_or(0));
  return kept;
}

// The in-process run against R - 1 ranks resumed from the state it went on from.
void show_kept(LessonContext& ctx, const Dataset& data, const ElasticOutcome& kept) {
  if (!kept.from) return;
  const int world = ctx.size();
  const TrainResult fresh =
      train_on(world - 1, data, lesson_config(ctx.seed(), 20), nullptr, &*kept.from);
  ctx.say_tr("in-process, parameters against {} resumed from that state: {}",
             "进程内的参数与 {}从同一状态续训相比：{}", ranks_text(world - 1, ctx.lang()),
             compare_params(kept.result, fresh, ctx.lang()));
}

// Asynchronous SGD with one parameter server and R - 1 workers (momentum 0, 20 steps).
TrainResult train_async(int world, const Dataset& data, uint64_t seed, int64_t max_staleness) {
  TrainConfig config = lesson_config(seed, 20);
  config.sgd.momentum = 0;
  config.parameter_servers = 1;
  config.max_staleness = max_staleness;
  return train_on(world, data, config);
}

// "yes" when the bound held, else what broke it.
std::string within(int64_t value, int64_t bound, Lang lang) {
  if (value <= bound) return lang == Lang::zh ? "是" : "yes";
  return fmt::format(fmt::runtime(lang == Lang::zh ? "否（{}）" : "no ({})"), value);
}

void show_async(LessonContext& ctx, const Dataset& data) {
  const int world = ctx.size();
  const int workers = world - 1;
  const TrainResult lock = train_async(world, data, ctx.seed(), 0);
  ctx.say_tr("lock step (--max-staleness 0), {} updates: each at most {} stale: {}",
             "步调一致（--max-staleness 0），{} 次更新，陈旧度都不超过 {}：{}",
             lock.staleness.updates, workers - 1,
             within(lock.staleness.max, workers - 1, ctx.lang()));
  TrainConfig sync = lesson_config(ctx.seed(), 20);
  sync.sgd.momentum = 0;
  const TrainResult plain = train_on(workers, data, sync);
  const double diff = max_abs_difference(flat_params(lock.params), flat_params(plain.params));
  ctx.say_tr("lock step, parameters against synchronous SGD on {}: {}",
             "步调一致时的参数与 {}上的同步 SGD 相比：{}", ranks_text(workers, ctx.lang()),
             diff < 1e-5
                 ? ctx.tr("equal to float rounding (< 1e-5)", "在浮点舍入误差内相同 (< 1e-5)")
                 : describe_difference(diff, ctx.lang()));
  const TrainResult ahead = train_async(world, data, ctx.seed(), 1);
  const int64_t bound = 3 * (workers - 1);  // (2T + 1)(W - 1) with T = 1
  ctx.say_tr("--max-staleness 1, {} updates: each at most (2T + 1)(W - 1) = {} stale: {}",
             "--max-staleness 1，{} 次更新，陈旧度都不超过 (2T + 1)(W - 1) = {}：{}",
             ahead.staleness.updates, bound, within(ahead.staleness.max, bound, ctx.lang()));
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
      const double t = straggler_step_s(data, ctx.seed(), world, slowdown);
      ctx.say_tr("rank {} computes {:g}x as long: {:.3f} ms per step",
                 "秩 {} 的计算时间 ×{:g}：每步 {:.3f} ms", world - 1, slowdown, t * 1e3);
    }
  }

  ctx.section("crash");
  if (comm.rank() == 0) {
    // Which step the survivors had finished when the abort reached them depends on thread
    // timing; the transcript says only what is deterministic: where rank 1 died, and how.
    std::optional<CommError> error;
    run_until_crash(world, data, lesson_config(ctx.seed(), 10), 0, 4, error);
    if (error)
      ctx.say_tr(
          "rank 1 died at step {} of 10; the run stopped: CommError, exit code {}, peer rank {}",
          "秩 1 在第 {0} 步（共 10 步）时失效，运行停止：与秩 {2} 的通信失败（CommError，退出码 "
          "{1}）",
          4, error->exit_code(), error->peer());
    else
      ctx.say("(no failure?)");
  }

  ctx.section("checkpoint");
  std::optional<TrainResult> whole;
  if (comm.rank() == 0) {
    whole = train_on(world, data, lesson_config(ctx.seed(), 20));
    show_crash_and_resume(ctx, data, *whole);
  }

  ctx.section("state");
  if (comm.rank() == 0) show_parameters_only(ctx, data, *whole);

  ctx.section("elastic");
  std::optional<ElasticOutcome> kept;
  if (comm.rank() == 0) kept = show_elastic(ctx, data, *whole);

  ctx.section("kept");
  if (comm.rank() == 0) show_kept(ctx, data, *kept);

  ctx.section("async");
  if (comm.rank() == 0) show_async(ctx, data);

  ctx.section("next");
}

}  // namespace dsgd::lessons
