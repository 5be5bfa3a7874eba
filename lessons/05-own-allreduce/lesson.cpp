// Lesson 5: build your own all_reduce. First the ring of the PyTorch tutorial ("Our Own
// Ring-Allreduce"), then dsgd's naive, ring and tree algorithms on the same vector, their
// alpha-beta costs as latency and bandwidth change, and the same costs measured on a
// simulated cluster. The exercise: exercise.cpp, checked by `dsgd lesson 5 --check FILE`.
// R = ranks, S = bytes of the vector, a = latency (alpha), B = bandwidth.
#include <algorithm>
#include <vector>

#include "core/comm/collectives.h"
#include "core/comm/cost_model.h"
#include "lessons/lesson.h"
#include "sim/cluster.h"

namespace dsgd::lessons {
namespace {

// The tutorial's allreduce(send, recv): the whole vector travels R - 1 times around the
// ring; each rank adds what it receives. Simple, but every step moves all S bytes.
void tutorial_ring_allreduce(Communicator& comm, std::span<const float> send,
                             std::span<float> recv) {
  const int rank = comm.rank(), size = comm.size();
  std::vector<float> send_buff(send.begin(), send.end());
  std::vector<float> recv_buff(send.begin(), send.end());
  std::vector<float> accum(send.begin(), send.end());
  const int left = (rank - 1 + size) % size;
  const int right = (rank + 1) % size;
  for (int i = 0; i < size - 1; ++i) {
    if (i % 2 == 0) {
      // Send send_buff
      Request send_req = comm.isend(send_buff, right);
      comm.recv(recv_buff, left);
      for (size_t j = 0; j < accum.size(); ++j)
        accum[j] += recv_buff[j];
      comm.wait(send_req);
    } else {
      // Send recv_buff
      Request send_req = comm.isend(recv_buff, right);
      comm.recv(send_buff, left);
      for (size_t j = 0; j < accum.size(); ++j)
        accum[j] += send_buff[j];
      comm.wait(send_req);
    }
  }
  std::copy(accum.begin(), accum.end(), recv.begin());
}

// "65.7 us", "2.05 ms", "6.76 s": three or four digits, whatever the size.
std::string ms(double seconds) {
  if (seconds < 1e-3) return fmt::format("{:.1f} us", seconds * 1e6);
  if (seconds < 1) return fmt::format("{:.2f} ms", seconds * 1e3);
  return fmt::format("{:.2f} s", seconds);
}

std::string bytes_text(double bytes) {
  if (bytes >= 1 << 30) return fmt::format("{:.3g} GiB", bytes / (1 << 30));
  if (bytes >= 1 << 20) return fmt::format("{:.3g} MiB", bytes / (1 << 20));
  if (bytes >= 1 << 10) return fmt::format("{:.3g} KiB", bytes / (1 << 10));
  return fmt::format("{:g} B", bytes);
}

// Rank 0: the model time naive and ring take on a simulated cluster of `world` nodes behind
// one switch, beside what the cost model predicts for a switch. (Tree and halving-doubling
// are left out: on the simulator's switch their model time depends on thread timing.)
void measure(LessonContext& ctx, int world, size_t floats, double alpha_s, double bandwidth_Bps) {
  const Algorithm algorithms[] = {Algorithm::naive, Algorithm::ring};
  ctx.say("R = {}, S = {}, a = {:g} ms, B = {:g} Gbit/s, {}", world, bytes_text(floats * 4.0),
          alpha_s * 1e3, bandwidth_Bps * 8 / 1e9, ctx.tr("switch", "交换机"));
  ctx.say("  {:<18} {:>12} {:>12}", ctx.tr("algorithm", "算法"), ctx.tr("predicted", "预测"),
          ctx.tr("simulated", "模拟"));
  for (Algorithm a : algorithms) {
    sim::ClusterOptions options;
    options.nodes = world;
    options.network.link.latency_s = alpha_s;
    options.network.link.bandwidth_Bps = bandwidth_Bps;
    options.network.topology = sim::Topology::switch_;
    std::vector<double> model_s(world, 0.0);
    sim::run_cluster(options, [&](Communicator& comm) {
      std::vector<float> data(floats, static_cast<float>(comm.rank() + 1));
      all_reduce(comm, data, ReduceOp::SUM, {.algorithm = a});
      model_s[comm.rank()] = comm.model_s();
    });
    const double predicted = collective_cost(CollectiveOp::all_reduce, a, world, floats * 4)
                                 .predict_switch_s(alpha_s, bandwidth_Bps);
    ctx.say("  {:<18} {:>12} {:>12}", to_string(a), ms(predicted),
            ms(*std::max_element(model_s.begin(), model_s.end())));
  }
}

// The four this lesson compares (recursive doubling, for short messages, is left out).
constexpr Algorithm kLessonAlgorithms[] = {Algorithm::naive, Algorithm::ring, Algorithm::tree,
                                           Algorithm::halving_doubling};

Cost all_reduce_cost(Algorithm a, int world, size_t bytes) {
  return collective_cost(CollectiveOp::all_reduce, a, world, bytes);
}

// Rank 0: the time each algorithm takes on a switch by the cost model, for R = 8 and 64,
// S = 4 KiB and 64 MiB, a = 0.01 ms and 1 ms at 10 Gbit/s; `*` marks the fastest.
void time_table(LessonContext& ctx) {
  const double bandwidth_Bps = 1.25e9;
  ctx.say("  {:>3} {:>7} {:>7} {:>9} | {:>10} {:>10} {:>10} {:>10}", "R", "S", "a", "B", "naive",
          "ring", "tree", "halv-doub");
  for (int w : {8, 64})
    for (size_t s : {size_t{4} << 10, size_t{64} << 20})
      for (double alpha_s : {10e-6, 1e-3}) {
        std::string row =
            fmt::format("  {:>3} {:>7} {:>5g}ms {:>4g}Gb/s |", w, bytes_text(double(s)),
                        alpha_s * 1e3, bandwidth_Bps * 8 / 1e9);
        std::vector<double> t;
        for (Algorithm a : kLessonAlgorithms)
          t.push_back(all_reduce_cost(a, w, s).predict_switch_s(alpha_s, bandwidth_Bps));
        const double best = *std::min_element(t.begin(), t.end());
        for (double x : t)
          row += fmt::format(" {:>9}{}", ms(x), x == best ? "*" : " ");
        ctx.say("{}", row);
      }
}

// Rank 0: the bytes the busiest rank sends, for the table's R and S.
void bytes_table(LessonContext& ctx) {
  ctx.say("  {:>3} {:>7}   | {:>10} {:>10} {:>10} {:>10}   ({})", "R", "S", "naive", "ring", "tree",
          "halv-doub", ctx.tr("bytes the busiest rank sends", "最忙的秩发送的字节"));
  for (int w : {8, 64})
    for (size_t s : {size_t{4} << 10, size_t{64} << 20}) {
      std::string row = fmt::format("  {:>3} {:>7}   |", w, bytes_text(double(s)));
      for (Algorithm a : kLessonAlgorithms)
        row += fmt::format(" {:>10}", bytes_text(all_reduce_cost(a, w, s).bytes_sent_per_rank));
      ctx.say("{}", row);
    }
}

}  // namespace

void lesson_05(LessonContext& ctx) {
  Communicator& comm = ctx.comm();
  const int rank = comm.rank();
  const auto r = static_cast<float>(rank);

  ctx.section("tutorial-ring");
  std::vector<float> send{r + 1, 10 * (r + 1), 100 * (r + 1)}, recv(3, 0.0f);
  tutorial_ring_allreduce(comm, send, recv);
  ctx.print("{}", format_values(recv));

  ctx.section("three");
  const Algorithm algorithms[] = {Algorithm::naive, Algorithm::ring, Algorithm::tree};
  std::vector<uint64_t> sent;
  for (Algorithm a : algorithms) {
    ctx.next_group();
    ctx.say("-- all_reduce {} --", to_string(a));
    std::vector<float> data(8);
    for (size_t i = 0; i < data.size(); ++i)
      data[i] = (r + 1) * static_cast<float>(i + 1);
    const uint64_t before = comm.bytes_sent();
    all_reduce(comm, data, ReduceOp::SUM, {.algorithm = a});
    sent.push_back(comm.bytes_sent() - before);
    ctx.print("{}", format_values(data, 8));
  }
  ctx.next_group();
  ctx.print("{}: naive {} B, ring {} B, tree {} B", ctx.tr("bytes sent", "发送字节"), sent[0],
            sent[1], sent[2]);

  ctx.section("costs");
  if (rank == 0) {
    time_table(ctx);
    ctx.say("");
    bytes_table(ctx);
  }

  ctx.section("measure");
  if (rank == 0) measure(ctx, 4, size_t{1} << 18, 100e-6, 1.25e8);

  ctx.section("exercise");
  ctx.section("next");
}

}  // namespace dsgd::lessons
