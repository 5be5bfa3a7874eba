// Lesson 8: model parallelism. An MLP with one Linear layer per rank: rank 0 holds the
// first layer, rank R-1 the last. Activations travel forward with send/recv, gradients
// travel back; each rank updates only its own layer. Then the same model as a pipeline
// (GPipe): the batch is cut into M micro-batches so that the stages work at the same time.
// R = ranks = layers, B = batch, M = micro-batches, n = B / M rows, I/O = a layer's sizes.
#include <cmath>
#include <vector>

#include "core/data/sampler.h"
#include "core/nn/blas.h"
#include "core/nn/loss.h"
#include "lessons/lesson.h"
#include "lessons/training.h"

namespace dsgd::lessons {
namespace {

constexpr int64_t kHidden = 128;
constexpr int64_t kBatch = 64;
constexpr int kSteps = 20;
constexpr float kLr = 0.3f;

// One Linear layer, y = x W^T + b, with its gradients.
struct Layer {
  int64_t in = 0, out = 0;
  std::vector<float> w, b, dw, db;  // w, dw (O, I); b, db (O)

  Layer(int64_t in_, int64_t out_, uint64_t seed) : in(in_), out(out_) {
    w.resize(out * in);
    b.resize(out);
    dw.assign(w.size(), 0.0f);
    db.assign(b.size(), 0.0f);
    // U(-1/sqrt(in), 1/sqrt(in)) from splitmix64: the same numbers on every platform.
    uint64_t state = seed;
    auto next = [&] {
      uint64_t z = (state += 0x9E3779B97F4A7C15ull);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      return static_cast<float>((z ^ (z >> 31)) >> 40) / static_cast<float>(1 << 24);
    };
    const float bound = 1.0f / std::sqrt(static_cast<float>(in));
    for (float& v : w)
      v = (2 * next() - 1) * bound;
    for (float& v : b)
      v = (2 * next() - 1) * bound;
  }
  // x (n, I) -> y (n, O)
  void forward(const float* x, int64_t n, float* y) const {
    gemm(false, true, n, out, in, 1.0f, x, in, w.data(), in, 0.0f, y, out);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < out; ++j)
        y[i * out + j] += b[j];
  }
  // dy (n, O): dw += dy^T x, db += sum of dy's rows, dx (n, I) = dy W unless dx is null.
  void backward(const float* x, const float* dy, int64_t n, float* dx) {
    gemm(true, false, out, in, n, 1.0f, dy, out, x, in, 1.0f, dw.data(), in);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < out; ++j)
        db[j] += dy[i * out + j];
    if (dx) gemm(false, false, n, in, out, 1.0f, dy, out, w.data(), in, 0.0f, dx, in);
  }
  void update() {
    for (size_t i = 0; i < w.size(); ++i)
      w[i] -= kLr * dw[i];
    for (size_t i = 0; i < b.size(); ++i)
      b[i] -= kLr * db[i];
    std::fill(dw.begin(), dw.end(), 0.0f);
    std::fill(db.begin(), db.end(), 0.0f);
  }
  double flops(int64_t n) const { return 2.0 * double(n) * double(in) * double(out); }
  int64_t params() const { return out * in + out; }
};

// Layer l of the lesson's MLP D -> 128 -> ... -> C with `layers` Linear layers.
Layer make_layer(const Dataset& data, int l, int layers, uint64_t seed) {
  const int64_t in = l == 0 ? data.features : kHidden;
  const int64_t out = l == layers - 1 ? data.classes : kHidden;
  return Layer(in, out, seed * 1000 + static_cast<uint64_t>(l));
}

// One training step of stage `rank` (its layer) with M micro-batches, GPipe-style: every
// forward first, then every backward. Micro-batch m travels with tag m. The last stage
// returns the summed loss over the batch (others 0).
double pipeline_step(Communicator& comm, Layer& layer, const Dataset& data,
                     std::span<const int64_t> batch, int micro) {
  const int rank = comm.rank(), last = comm.size() - 1;
  const int64_t b = static_cast<int64_t>(batch.size()), n = b / micro;
  std::vector<std::vector<float>> inputs(micro), outputs(micro);
  std::vector<std::vector<int32_t>> labels(micro);
  double loss = 0;
  for (int m = 0; m < micro; ++m) {
    auto rows = batch.subspan(m * n, n);
    inputs[m].resize(n * layer.in);
    if (rank == 0 || rank == last) {
      std::vector<float> x(n * data.features);
      labels[m].resize(n);
      gather_rows(data.train, rows, x, labels[m]);
      if (rank == 0) inputs[m] = x;
    }
    if (rank > 0) comm.recv(inputs[m], rank - 1, m);  // activations of the stage before
    outputs[m].resize(n * layer.out);
    layer.forward(inputs[m].data(), n, outputs[m].data());
    comm.on_compute(0, layer.flops(n));
    if (rank < last) {
      for (float& v : outputs[m])
        v = std::max(v, 0.0f);  // ReLU
      comm.send(outputs[m], rank + 1, m);
    }
  }
  for (int m = micro - 1; m >= 0; --m) {
    std::vector<float> dz(n * layer.out);
    if (rank == last) {
      // dz = d(mean loss over the batch) / dlogits: every micro-batch is scaled by 1/B.
      LossSum s = softmax_cross_entropy(outputs[m].data(), labels[m].data(), n, layer.out,
                                        1.0f / static_cast<float>(b), dz.data());
      loss += s.loss;
    } else {
      comm.recv(dz, rank + 1, m);  // gradient with respect to our (ReLU) output
      for (size_t i = 0; i < dz.size(); ++i)
        if (outputs[m][i] <= 0) dz[i] = 0;
    }
    std::vector<float> dx(rank > 0 ? n * layer.in : 0);
    layer.backward(inputs[m].data(), dz.data(), n, rank > 0 ? dx.data() : nullptr);
    comm.on_compute(0, 2 * layer.flops(n));
    if (rank > 0) comm.send(dx, rank - 1, m);
  }
  layer.update();
  return loss;
}

// Trains kSteps with M micro-batches; the last rank prints the loss, rank 0 the model time
// of a step. Returns this rank's layer.
Layer train_pipeline(LessonContext& ctx, const Dataset& data, int micro) {
  Communicator& comm = ctx.comm();
  Layer layer = make_layer(data, comm.rank(), comm.size(), ctx.seed());
  DataParallelSampler sampler(data.train.size(), kBatch, true, ctx.seed());
  double first_end = 0;
  for (int step = 0; step < kSteps; ++step) {
    ctx.show_messages(step == 0);  // the messages of the first step only
    const double loss = pipeline_step(comm, layer, data, sampler.batch(step).indices, micro);
    if (step == 0) first_end = comm.model_s();
    if (comm.rank() == comm.size() - 1 && (step + 1) % 5 == 0)
      ctx.print("{} {:>2}: {} {:.4f}", ctx.tr("step", "步"), step + 1, ctx.tr("loss", "损失"),
                loss / kBatch);
  }
  ctx.show_messages(false);
  ctx.next_group();
  if (comm.rank() == 0) {
    const double per_step = (comm.model_s() - first_end) / (kSteps - 1);
    if (comm.model_s() >= 0)
      ctx.say("M = {}: {} {:.1f} us", micro, ctx.tr("model time per step", "每步模型时间"),
              per_step * 1e6);
    else
      ctx.say("M = {}: {}", micro,
              ctx.tr("(model time: simulated nodes only)", "（模型时间仅在模拟节点上可用）"));
  }
  return layer;
}

}  // namespace

void lesson_08(LessonContext& ctx) {
  Communicator& comm = ctx.comm();
  const int rank = comm.rank(), layers = comm.size();
  const Dataset& data = lesson_synthetic(ctx);

  ctx.section("forward-backward");
  const Layer layer = train_pipeline(ctx, data, 1);

  ctx.section("memory");
  int64_t total = 0;
  for (int l = 0; l < layers; ++l)
    total += make_layer(data, l, layers, ctx.seed()).params();
  ctx.print("{} {}x{}: {} {} {} ({:.0f}%)", ctx.tr("layer", "层"), layer.out, layer.in,
            layer.params(), ctx.tr("of", "/"), total, 100.0 * layer.params() / total);

  ctx.section("same-math");
  // Rank 0 trains the whole model alone with the same code and compares every layer.
  {
    std::vector<float> mine(layer.w);
    mine.insert(mine.end(), layer.b.begin(), layer.b.end());
    if (rank > 0) {
      comm.send(mine, 0, 100);
    } else {
      std::vector<Layer> alone;
      for (int l = 0; l < layers; ++l)
        alone.push_back(make_layer(data, l, layers, ctx.seed()));
      DataParallelSampler sampler(data.train.size(), kBatch, true, ctx.seed());
      for (int step = 0; step < kSteps; ++step) {
        auto batch = sampler.batch(step).indices;
        const int64_t n = kBatch;
        std::vector<float> x(n * data.features);
        std::vector<int32_t> labels(n);
        gather_rows(data.train, batch, x, labels);
        std::vector<std::vector<float>> acts{x};
        for (int l = 0; l < layers; ++l) {
          std::vector<float> y(n * alone[l].out);
          alone[l].forward(acts.back().data(), n, y.data());
          if (l < layers - 1)
            for (float& v : y)
              v = std::max(v, 0.0f);
          acts.push_back(std::move(y));
        }
        std::vector<float> dz(n * alone.back().out);
        softmax_cross_entropy(acts.back().data(), labels.data(), n, alone.back().out, 1.0f / n,
                              dz.data());
        for (int l = layers - 1; l >= 0; --l) {
          std::vector<float> dx(n * alone[l].in);
          alone[l].backward(acts[l].data(), dz.data(), n, dx.data());
          if (l > 0)
            for (size_t i = 0; i < dx.size(); ++i)
              if (acts[l][i] <= 0) dx[i] = 0;
          dz = std::move(dx);
        }
        for (Layer& a : alone)
          a.update();
      }
      double diff = 0;
      for (int l = 0; l < layers; ++l) {
        std::vector<float> theirs(alone[l].w.size() + alone[l].b.size());
        if (l == 0) {
          theirs = mine;
        } else {
          comm.recv(theirs, l, 100);
        }
        for (size_t i = 0; i < alone[l].w.size(); ++i)
          diff = std::max(diff, double(std::abs(theirs[i] - alone[l].w[i])));
        for (size_t i = 0; i < alone[l].b.size(); ++i)
          diff = std::max(diff, double(std::abs(theirs[alone[l].w.size() + i] - alone[l].b[i])));
      }
      ctx.say("{}: {}", ctx.tr("split model vs. one process", "切分的模型与单进程相比"),
              describe_difference(diff, ctx.lang()));
    }
  }

  ctx.section("pipeline");
  train_pipeline(ctx, data, 4);

  ctx.section("next");
}

}  // namespace dsgd::lessons
