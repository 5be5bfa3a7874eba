// Lesson 6: why synchronise. The same model trained by every rank three ways: each on its
// own share of the data with no communication (the copies drift apart), with gradients
// summed by all_reduce before every update (the copies stay identical), and with the
// trainer (core/train/trainer.h), which does the same. B = global batch.
#include <vector>

#include "core/comm/collectives.h"
#include "core/data/sampler.h"
#include "core/nn/sgd.h"
#include "core/train/trainer.h"
#include "lessons/lesson.h"
#include "lessons/training.h"

namespace dsgd::lessons {
namespace {

constexpr int64_t kBatch = 128;  // B, split across the ranks
constexpr int64_t kSteps = 30;
constexpr float kLr = 0.1f;
constexpr float kMomentum = 0.9f;

bool report_step(int64_t step) {
  return step == 1 || step == 10 || step == kSteps;
}

// Trains every rank's copy for kSteps on its slice of each global batch. With `sync`, the
// gradients are summed over the ranks first (each slice pre-scaled by 1/B, so the sum is
// the gradient of the mean loss over the global batch); without, each rank follows the
// mean loss of its own slice. Returns the final parameters.
std::vector<float> train_by_hand(LessonContext& ctx, const Dataset& data, bool sync) {
  Communicator& comm = ctx.comm();
  Model model = Model::from_spec(ModelSpec::parse("mlp:32"), data.features, data.classes);
  model.init(ctx.seed());  // the same start on every rank
  Sgd sgd({.lr = kLr, .momentum = kMomentum}, model.num_params());
  DataParallelSampler sampler(data.train.size(), kBatch, true, ctx.seed());
  for (int64_t step = 0; step < kSteps; ++step) {
    auto batch = sampler.batch(step);
    const auto b = static_cast<int64_t>(batch.indices.size());
    auto [lo, hi] = DataParallelSampler::slice(b, comm.rank(), comm.size());
    model.zero_grad();
    const float scale = 1.0f / static_cast<float>(sync ? b : hi - lo);
    forward_backward(model, data, batch.indices.subspan(lo, hi - lo), scale);
    if (sync) all_reduce(comm, model.grads(), ReduceOp::SUM);
    sgd.step(model.values(), model.grads());
    if (report_step(step + 1)) {
      const double diff = max_difference_from_rank0(comm, model.values());
      if (ctx.lang() == Lang::zh)
        ctx.say("第 {:>2} 步：与秩 0 的最大参数差 {:.4f}", step + 1, diff);
      else
        ctx.say("step {:>2}: largest parameter difference from rank 0 {:.4f}", step + 1, diff);
    }
  }
  LocalEval e = evaluate_local(model, data);
  ctx.print("{} {:.4f}, {} {:.1f}%", ctx.tr("test loss", "测试损失"), e.loss,
            ctx.tr("accuracy", "准确率"), 100 * e.accuracy);
  return {model.values().begin(), model.values().end()};
}

}  // namespace

void lesson_06(LessonContext& ctx) {
  Communicator& comm = ctx.comm();
  ctx.show_messages(false);  // hundreds of gradient messages; the numbers tell the story
  const Dataset& data = lesson_synthetic(ctx);

  ctx.section("independent");
  train_by_hand(ctx, data, false);

  ctx.section("all-reduce");
  const std::vector<float> by_hand = train_by_hand(ctx, data, true);

  ctx.section("trainer");
  TrainConfig config;
  config.model = ModelSpec::parse("mlp:32");
  config.global_batch = kBatch;
  config.sgd = {.lr = kLr, .momentum = kMomentum};
  config.steps = kSteps;
  config.seed = ctx.seed();
  TrainResult r = train(comm, data, config);
  std::vector<float> params;
  for (const NamedTensor& t : r.params)
    params.insert(params.end(), t.tensor.span().begin(), t.tensor.span().end());
  const double across = max_difference_from_rank0(comm, params);
  double vs_hand = 0;
  for (size_t i = 0; i < params.size(); ++i)
    vs_hand = std::max(vs_hand, double(std::abs(params[i] - by_hand[i])));
  ctx.print("{}: {}; {}: {}", ctx.tr("ranks", "各秩之间"), describe_difference(across, ctx.lang()),
            ctx.tr("vs. by hand", "与手写版本相比"), describe_difference(vs_hand, ctx.lang()));
  ctx.say("{} {:.4f}, {} {:.1f}%", ctx.tr("test loss", "测试损失"), r.test_loss.value_or(0),
          ctx.tr("accuracy", "准确率"), 100 * r.test_accuracy.value_or(0));

  ctx.section("exercise");
  ctx.section("next");
}

}  // namespace dsgd::lessons
