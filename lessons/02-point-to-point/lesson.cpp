// Lesson 2: point-to-point communication. The first program of the PyTorch distributed
// tutorial ("Blocking point-to-point communication"), line for line, then tags, then a
// rank collecting one value from every other rank.
#include <vector>

#include "lessons/lesson.h"

namespace dsgd::lessons {

void lesson_02(LessonContext& ctx) {
  Communicator& comm = ctx.comm();
  const int rank = comm.rank();

  ctx.section("send-recv");
  std::vector<float> tensor(2, 0.0f);  // tensor = torch.zeros(2)
  if (rank == 0) {
    tensor = {1.0f, -1.0f};  // tensor += torch.tensor([1., -1.])
    // Send the tensor to process 1
    comm.send(tensor, /*dst=*/1);  // dist.send(tensor=tensor, dst=1)
  } else if (rank == 1) {
    // Receive tensor from process 0
    comm.recv(tensor, /*src=*/0);  // dist.recv(tensor=tensor, src=0)
  }
  ctx.print("Rank {} has data {}", rank, format_values(tensor));

  ctx.section("tags");
  // Two messages from rank 0 to rank 1, received in the opposite order: the tag decides
  // which message a recv takes.
  if (rank == 0) {
    std::vector<float> a{10.0f}, b{20.0f};
    comm.send(a, 1, /*tag=*/1);
    comm.send(b, 1, /*tag=*/2);
  } else if (rank == 1) {
    std::vector<float> first(1), second(1);
    Status s2 = comm.recv(first, 0, /*tag=*/2);
    Status s1 = comm.recv(second, 0, /*tag=*/1);
    const char* en = "recv(tag={}) -> {} (source {}, tag {})";
    const char* zh = "recv(tag={}) -> {}（来源 {}，标签 {}）";
    ctx.print_tr(en, zh, 2, format_values(first), s2.source, s2.tag);
    ctx.print_tr(en, zh, 1, format_values(second), s1.source, s1.tag);
  }

  ctx.section("collect");
  // Every rank sends rank * rank to rank 0, which receives from rank 1, 2, ... in turn.
  std::vector<float> value{static_cast<float>(rank * rank)};
  if (rank == 0) {
    std::vector<float> all{value[0]};
    for (int src = 1; src < comm.size(); ++src) {
      comm.recv(value, src);
      all.push_back(value[0]);
    }
    ctx.print("{} {}", ctx.tr("collected", "收集到"), format_values(all, 16));
  } else {
    comm.send(value, 0);
  }

  ctx.section("next");
}

}  // namespace dsgd::lessons
