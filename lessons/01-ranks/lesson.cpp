// Lesson 1: ranks and the world. Every rank runs this same function; all that tells them
// apart is their rank, from 0 to size - 1. Sends no message.
#include "core/data/sampler.h"
#include "lessons/lesson.h"

namespace dsgd::lessons {

void lesson_01(LessonContext& ctx) {
  Communicator& comm = ctx.comm();

  ctx.section("hello");
  // torch.distributed: dist.get_rank(), dist.get_world_size()
  ctx.print_tr("Hello from rank {} / {}", "大家好，我是秩 {}，一共 {} 个秩", comm.rank(),
               comm.size());

  ctx.section("backend");
  ctx.say("comm.backend() = \"{}\"", comm.backend());

  ctx.section("split");
  // 100 samples, a contiguous slice per rank: how the data-parallel trainer splits a batch.
  const int64_t samples = 100;
  auto [begin, end] = DataParallelSampler::slice(samples, comm.rank(), comm.size());
  ctx.print_tr("I take samples {}..{} ({} samples)", "我负责第 {} 到第 {} 个样本（共 {} 个）",
               begin, end - 1, end - begin);

  ctx.section("leader");
  if (comm.rank() == 0)
    ctx.print("{}", ctx.tr("I am rank 0: I print the summaries and write the files.",
                           "我是秩 0：汇总由我来打印，文件也由我来写。"));

  ctx.section("next");
}

}  // namespace dsgd::lessons
