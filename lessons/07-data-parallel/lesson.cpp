// Lesson 7: data-parallel synchronous SGD on Fashion-MNIST with the trainer: the loss going
// down, the equivalence of R ranks with one rank and the same global batch, and the
// speed-up against node count, latency and bandwidth, in model time on simulated clusters.
// B = global batch, R = ranks, P = parameters.
#include <vector>

#include "core/train/trainer.h"
#include "lessons/cluster_runs.h"
#include "lessons/lesson.h"
#include "lessons/training.h"
#include "sim/cluster.h"

namespace dsgd::lessons {
namespace {

TrainConfig lesson_config(uint64_t seed) {
  TrainConfig config;
  config.model = ModelSpec::parse("mlp:64");
  config.global_batch = 256;
  config.sgd = {.lr = 0.1f, .momentum = 0.9f};
  config.steps = 16;
  config.eval_every = 8;
  config.seed = seed;
  return config;
}

}  // namespace

void lesson_07(LessonContext& ctx) {
  Communicator& comm = ctx.comm();
  ctx.show_messages(false);
  const Dataset data =
      subset(ctx.dataset("fashion-mnist:" + ctx.settings().fashion_dir), 4096, 1000);
  const TrainConfig config = lesson_config(ctx.seed());

  ctx.section("train");
  ctx.say_tr("{} training images, {} test images; model {}; B = {}, per rank {}",
             "{} 张训练图像，{} 张测试图像；模型 {}；B = {}，每个秩 {}", data.train.size(),
             data.test.size(), config.model.str(), config.global_batch,
             config.global_batch / comm.size());
  TrainHooks hooks;
  if (comm.rank() == 0)
    hooks.on_step = [&](const StepMetrics& m) {
      if (m.step % 2 != 0) return;
      std::string test;
      if (m.test_accuracy)
        test = fmt::format(fmt::runtime(ctx.tr(", test accuracy {:.1f}%", "，测试准确率 {:.1f}%")),
                           100 * *m.test_accuracy);
      if (ctx.lang() == Lang::zh)
        ctx.say("  第 {:>2} 步：损失 {:.4f}{}", m.step, m.loss, test);
      else
        ctx.say("  step {:>2}: loss {:.4f}{}", m.step, m.loss, test);
    };
  const TrainResult result = train(comm, data, config, nullptr, hooks);

  ctx.section("equivalence");
  if (comm.rank() == 0) {
    TrainResult single;
    sim::run_cluster({.nodes = 1}, [&](Communicator& one) { single = train(one, data, config); });
    const std::vector<float> a = flat_params(result.params), b = flat_params(single.params);
    double diff = 0;
    for (size_t i = 0; i < a.size(); ++i)
      diff = std::max(diff, double(std::abs(a[i] - b[i])));
    ctx.say_tr("{} ranks, B = {}: loss {:.4f}", "{} 个秩，B = {}：损失 {:.4f}", comm.size(),
               config.global_batch, result.final_loss);
    ctx.say_tr("1 rank , B = {}: loss {:.4f}", "1 个秩，B = {}：损失 {:.4f}", config.global_batch,
               single.final_loss);
    ctx.say("{}{}", ctx.tr("parameters: ", "参数："), describe_difference(diff, ctx.lang()));
  }

  ctx.section("speedup");
  if (comm.rank() == 0) {
    TrainConfig big = config;
    big.global_batch = 512;
    struct Link {
      double alpha_s, bandwidth_Bps;
    };
    const Link links[] = {{10e-6, 1.25e9}, {1e-3, 1.25e9}, {10e-6, 12.5e6}};
    const int worlds[] = {1, 2, 4, 8};
    ctx.say("  {:>7} {:>9} | {:>16} {:>16} {:>16} {:>16}", "a", "B", "R = 1", "R = 2", "R = 4",
            "R = 8");
    for (const Link& l : links) {
      std::string row =
          fmt::format("  {:>5g}ms {:>5g}Gb/s |", l.alpha_s * 1e3, l.bandwidth_Bps * 8 / 1e9);
      double base = 0;
      for (int w : worlds) {
        sim::ClusterOptions options;
        options.nodes = w;
        options.network.link.latency_s = l.alpha_s;
        options.network.link.bandwidth_Bps = l.bandwidth_Bps;
        const double t = step_model_s(data, big, options);
        if (w == 1) base = t;
        row += fmt::format(" {:>7.2f} ms {:>4.1f}x", t * 1e3, base / t);
      }
      ctx.say("{}", row);
    }
  }

  ctx.section("next");
}

}  // namespace dsgd::lessons
