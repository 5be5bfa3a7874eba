// Lesson 4: the collectives (torch.distributed's broadcast, reduce, all_reduce, gather,
// scatter, all_gather, reduce_scatter, barrier), each on a tiny tensor, with the messages
// dsgd's algorithm for it sends. R = ranks.
#include <vector>

#include "core/comm/collectives.h"
#include "lessons/lesson.h"

namespace dsgd::lessons {
namespace {

// algorithm_label() (core/comm/collectives.h) in Chinese.
const char* algorithm_label_zh(CollectiveOp op, Algorithm a) {
  switch (a) {
    case Algorithm::naive:
      return op == CollectiveOp::all_reduce ? "朴素算法（归约到秩 0，再发回）"
                                            : "直接收发（根与每个秩之间）";
    case Algorithm::ring:
      return op == CollectiveOp::broadcast ? "沿环的链" : "环形";
    case Algorithm::tree:
      return op == CollectiveOp::all_reduce ? "二项树归约 + 广播" : "二项树";
    case Algorithm::halving_doubling:
      return "递归减半-倍增 (Rabenseifner)";
    case Algorithm::recursive_doubling:
      return "递归倍增（整个缓冲区）";
    case Algorithm::automatic:
      return op == CollectiveOp::barrier ? "传播式 (dissemination)" : "自动";
    case Algorithm::native:
      return "后端自带";
  }
  return "?";
}

// "broadcast algorithm: binomial tree" for op on `floats` floats per rank.
void say_algorithm(LessonContext& ctx, CollectiveOp op, size_t floats) {
  const Algorithm a =
      resolve_algorithm(op, Algorithm::automatic, ctx.size(), floats * sizeof(float));
  ctx.say_tr("{} algorithm: {}", "{} 算法：{}", to_string(op),
             ctx.lang() == Lang::zh ? algorithm_label_zh(op, a) : algorithm_label(op, a));
}

}  // namespace

void lesson_04(LessonContext& ctx) {
  Communicator& comm = ctx.comm();
  const int rank = comm.rank(), world = comm.size();
  const auto r = static_cast<float>(rank);

  ctx.section("broadcast");
  std::vector<float> t(3, 0.0f);
  if (rank == 0) t = {10, 20, 30};
  say_algorithm(ctx, CollectiveOp::broadcast, t.size());
  broadcast(comm, t, /*root=*/0);  // dist.broadcast(t, src=0)
  ctx.print("{}", format_values(t));

  ctx.section("reduce");
  t = {r + 1, 10 * (r + 1)};
  say_algorithm(ctx, CollectiveOp::reduce, t.size());
  ctx.print("{} {}", ctx.tr("before", "之前"), format_values(t));
  reduce(comm, t, ReduceOp::SUM, /*root=*/0);  // dist.reduce(t, dst=0, op=SUM)
  if (rank == 0)
    ctx.print("{} {}", ctx.tr("after, on the root:", "之后，根上："), format_values(t));

  ctx.section("all_reduce");
  std::vector<float> u{r + 1, 10 * (r + 1), 100 * (r + 1), 1000 * (r + 1)};
  say_algorithm(ctx, CollectiveOp::all_reduce, u.size());
  all_reduce(comm, u, ReduceOp::SUM);  // dist.all_reduce(u, op=SUM)
  // One value per rank, with the tree algorithm: a reduce to rank 0, then a broadcast.
  std::vector<float> m{static_cast<float>((rank * 7) % 5)};
  const float before = m[0];
  all_reduce(comm, m, ReduceOp::MAX, {.algorithm = Algorithm::tree});
  ctx.print("SUM -> {};  MAX {:g} -> {:g}", format_values(u), before, m[0]);

  ctx.section("gather");
  std::vector<float> mine{r, r * r};
  std::vector<float> rows(rank == 0 ? 2 * world : 0);
  say_algorithm(ctx, CollectiveOp::gather, mine.size() * world);
  gather(comm, mine, rows, /*root=*/0);  // dist.gather(mine, rows, dst=0)
  if (rank == 0) ctx.print("{}", format_values(rows, 2 * world));

  ctx.section("scatter");
  std::vector<float> table;
  if (rank == 0)
    for (int i = 0; i < world; ++i)
      table.insert(table.end(), {10.0f * i, 10.0f * i + 1});
  std::vector<float> row(2, 0.0f);
  say_algorithm(ctx, CollectiveOp::scatter, 2 * world);
  scatter(comm, table, row, /*root=*/0);  // dist.scatter(row, table, src=0)
  ctx.print("{}", format_values(row));

  ctx.section("all_gather");
  std::vector<float> one{(r + 1) * (r + 1)};
  std::vector<float> everyone(world, 0.0f);
  say_algorithm(ctx, CollectiveOp::all_gather, world);
  all_gather(comm, one, everyone);  // dist.all_gather(everyone, one)
  ctx.print("{}", format_values(everyone, world));

  ctx.section("reduce_scatter");
  // Every rank contributes (r + 1) * [1, 2, ..., R]; rank i gets element i of the sum.
  std::vector<float> contribution(world);
  for (int i = 0; i < world; ++i)
    contribution[i] = (r + 1) * static_cast<float>(i + 1);
  std::vector<float> piece(1, 0.0f);
  say_algorithm(ctx, CollectiveOp::reduce_scatter, world);
  reduce_scatter(comm, contribution, piece, ReduceOp::SUM);  // dist.reduce_scatter
  ctx.print("{}", format_values(piece));

  ctx.section("barrier");
  ctx.print("{}", ctx.tr("before the barrier", "进入屏障之前"));
  say_algorithm(ctx, CollectiveOp::barrier, 0);
  barrier(comm);  // dist.barrier()
  ctx.print("{}", ctx.tr("after the barrier", "离开屏障之后"));

  ctx.section("exercise");
  ctx.section("next");
}

}  // namespace dsgd::lessons
