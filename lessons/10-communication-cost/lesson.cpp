// Lesson 10: cutting the cost of communication. Gradient bucketing and overlap (from the
// cost model), then four ways to send less, each training the same model on a simulated
// cluster with a slow link: top-k sparsification with and without error feedback, 8-bit
// quantisation with error feedback, and local SGD; loss against model time for each.
// R = ranks, P = parameters, k = values top-k keeps, H = local steps between averages.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "core/comm/collectives.h"
#include "core/comm/cost_model.h"
#include "core/data/sampler.h"
#include "core/nn/sgd.h"
#include "lessons/lesson.h"
#include "lessons/training.h"
#include "sim/cluster.h"

namespace dsgd::lessons {
namespace {

enum class Method { all_reduce, top_k, top_k_feedback, int8_feedback, local_sgd };

const char* method_name(Method m) {
  switch (m) {
    case Method::all_reduce:
      return "all_reduce (fp32)";
    case Method::top_k:
      return "top-1%";
    case Method::top_k_feedback:
      return "top-1% + EF";
    case Method::int8_feedback:
      return "int8 + EF";
    case Method::local_sgd:
      return "local SGD, H = 10";
  }
  return "";
}

constexpr int64_t kBatch = 256;
constexpr int kSteps = 60;
constexpr float kLr = 0.2f;
constexpr int kLocalSteps = 10;  // H

// Top-k: this rank's k largest |v| as (index, value) pairs, ties to the lower index; the
// pairs of every rank are gathered and summed into grads.
void exchange_top_k(Communicator& comm, std::span<float> grads, std::vector<float>& residual,
                    bool feedback) {
  const size_t p = grads.size(), k = std::max<size_t>(1, p / 100);
  std::vector<float> v(grads.begin(), grads.end());
  if (feedback)
    for (size_t i = 0; i < p; ++i)
      v[i] += residual[i];
  std::vector<uint32_t> order(p);
  std::iota(order.begin(), order.end(), 0u);
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](uint32_t a, uint32_t b) {
    return std::abs(v[a]) != std::abs(v[b]) ? std::abs(v[a]) > std::abs(v[b]) : a < b;
  });
  std::vector<float> pairs(2 * k);  // (index, value); indices below 2^24 are exact floats
  for (size_t j = 0; j < k; ++j) {
    pairs[2 * j] = static_cast<float>(order[j]);
    pairs[2 * j + 1] = v[order[j]];
  }
  if (feedback) {  // what was not sent is kept for the next step
    residual = v;
    for (size_t j = 0; j < k; ++j)
      residual[order[j]] = 0;
  }
  std::vector<float> all(pairs.size() * comm.size());
  all_gather(comm, pairs, all);
  std::fill(grads.begin(), grads.end(), 0.0f);
  for (size_t j = 0; j < all.size(); j += 2)
    grads[static_cast<size_t>(all[j])] += all[j + 1];
}

// 8-bit: v = g + residual is sent as int8 q = round(v / scale), scale = max|v| / 127, four
// values packed per float of the message; every rank sums the dequantised vectors.
void exchange_int8(Communicator& comm, std::span<float> grads, std::vector<float>& residual) {
  const size_t p = grads.size(), words = (p + 3) / 4;
  std::vector<float> v(p);
  float max = 0;
  for (size_t i = 0; i < p; ++i) {
    v[i] = grads[i] + residual[i];
    max = std::max(max, std::abs(v[i]));
  }
  const float scale = max > 0 ? max / 127 : 1;
  std::vector<int8_t> q(words * 4, 0);
  for (size_t i = 0; i < p; ++i) {
    q[i] = static_cast<int8_t>(std::lround(v[i] / scale));
    residual[i] = v[i] - q[i] * scale;
  }
  std::vector<float> message(words + 1);
  std::memcpy(message.data(), q.data(), words * 4);  // the bytes travel unchanged
  message[words] = scale;
  std::vector<float> all(message.size() * comm.size());
  all_gather(comm, message, all);
  std::fill(grads.begin(), grads.end(), 0.0f);
  for (int r = 0; r < comm.size(); ++r) {
    const float* m = all.data() + r * message.size();
    std::vector<int8_t> qr(words * 4);
    std::memcpy(qr.data(), m, words * 4);
    for (size_t i = 0; i < p; ++i)
      grads[i] += qr[i] * m[words];
  }
}

struct Checkpoint {
  int step;
  double model_s, test_loss;
};
struct MethodResult {
  double bytes_per_step = 0;
  std::vector<Checkpoint> points;
  double accuracy = 0;
};

// Trains with `method` on a simulated cluster of `world` nodes over `link`.
MethodResult run_method(const Dataset& data, uint64_t seed, int world, Method method,
                        double alpha_s, double bandwidth_Bps) {
  sim::ClusterOptions options;
  options.nodes = world;
  options.network.link.latency_s = alpha_s;
  options.network.link.bandwidth_Bps = bandwidth_Bps;
  sim::SimControl control;  // model time does not depend on the clock's speed
  control.set_speed(50);
  options.control = &control;
  MethodResult result;
  sim::run_cluster(options, [&](Communicator& comm) {
    Model model = Model::from_spec(ModelSpec::parse("mlp:64"), data.features, data.classes);
    model.init(seed);
    Sgd sgd({.lr = kLr}, model.num_params());
    DataParallelSampler sampler(data.train.size(), kBatch, true, seed);
    std::vector<float> residual(model.num_params(), 0.0f);
    const double macs = model.macs_per_sample();  // a step: about 6 flops per MAC
    for (int step = 0; step < kSteps; ++step) {
      auto batch = sampler.batch(step);
      const auto b = static_cast<int64_t>(batch.indices.size());
      auto [lo, hi] = DataParallelSampler::slice(b, comm.rank(), comm.size());
      model.zero_grad();
      // Local SGD follows each rank's own mean gradient; the others pre-scale by 1/B so
      // that the sum over the ranks is the mean over the global batch.
      const float scale = 1.0f / float(method == Method::local_sgd ? hi - lo : b);
      forward_backward(model, data, batch.indices.subspan(lo, hi - lo), scale);
      comm.on_compute(0, 6 * macs * double(hi - lo));
      switch (method) {
        case Method::all_reduce:
          all_reduce(comm, model.grads(), ReduceOp::SUM);
          break;
        case Method::top_k:
          exchange_top_k(comm, model.grads(), residual, false);
          break;
        case Method::top_k_feedback:
          exchange_top_k(comm, model.grads(), residual, true);
          break;
        case Method::int8_feedback:
          exchange_int8(comm, model.grads(), residual);
          break;
        case Method::local_sgd:
          break;
      }
      sgd.step(model.values(), model.grads());
      if (method == Method::local_sgd && (step + 1) % kLocalSteps == 0)
        all_reduce(comm, model.values(), ReduceOp::AVG);  // average the models
      if (comm.rank() == 0 && (step + 1) % 20 == 0)
        result.points.push_back({step + 1, comm.model_s(), evaluate_local(model, data).loss});
    }
    if (comm.rank() == 0) {
      result.bytes_per_step = double(comm.bytes_sent()) / kSteps;
      result.accuracy = evaluate_local(model, data).accuracy;
    }
  });
  return result;
}

std::string ms(double s) {
  return fmt::format("{:.2f} ms", s * 1e3);
}

}  // namespace

void lesson_10(LessonContext& ctx) {
  Communicator& comm = ctx.comm();
  ctx.show_messages(false);

  ctx.section("buckets");
  if (comm.rank() == 0) {
    // A 100 MiB gradient (25M parameters) on 8 ranks, 25 us and 10 Gbit/s links, and a
    // backward pass of 100 ms whose gradients become ready layer by layer.
    const int world = 8;
    const double bytes = 100.0 * (1 << 20), alpha = 25e-6, bw = 1.25e9, backward = 0.1;
    ctx.say("  {:>7} | {:>10} {:>14} {:>14}", ctx.tr("buckets", "桶数"),
            ctx.tr("all-reduce", "全归约"), ctx.tr("no overlap", "不重叠"),
            ctx.tr("with overlap", "重叠"));
    for (int k : {1, 4, 16, 64, 256, 1024}) {
      const double c = collective_cost(CollectiveOp::all_reduce, Algorithm::ring, world,
                                       static_cast<size_t>(bytes / k))
                           .predict_s(alpha, bw);
      // Overlap: bucket i is all-reduced while the backward pass computes bucket i + 1.
      const double piece = backward / k;
      const double overlapped = piece + (k - 1) * std::max(piece, c) + c;
      ctx.say("  {:>7} | {:>10} {:>14} {:>14}", k, ms(k * c), ms(backward + k * c), ms(overlapped));
    }
  }

  ctx.section("compress");
  if (comm.rank() == 0) {
    const Dataset& data = lesson_synthetic(ctx);
    const double alpha = 0.5e-3, bw = 1.25e6;  // 0.5 ms, 10 Mbit/s
    ctx.say("R = {}, a = 0.5 ms, B = 10 Mbit/s; mlp:64 (P = 2826), batch {}, lr {:g}", comm.size(),
            kBatch, kLr);
    ctx.say("  {:<18} {:>10} | {:>19} {:>19} {:>19} | {:>5}", ctx.tr("method", "方法"),
            ctx.tr("bytes/step", "字节/步"), ctx.tr("step 20", "第 20 步"),
            ctx.tr("step 40", "第 40 步"), ctx.tr("step 60", "第 60 步"), ctx.tr("acc.", "准确率"));
    for (Method m : {Method::all_reduce, Method::top_k, Method::top_k_feedback,
                     Method::int8_feedback, Method::local_sgd}) {
      const MethodResult r = run_method(data, ctx.seed(), comm.size(), m, alpha, bw);
      std::string row = fmt::format("  {:<18} {:>10.0f} |", method_name(m), r.bytes_per_step);
      for (const Checkpoint& c : r.points)
        row += fmt::format(" {:>6.4f} @ {:>9}", c.test_loss, ms(c.model_s));
      row += fmt::format(" | {:>4.1f}%", 100 * r.accuracy);
      ctx.say("{}", row);
    }
  }

  ctx.section("next");
}

}  // namespace dsgd::lessons
