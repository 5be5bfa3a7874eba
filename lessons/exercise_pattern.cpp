#include "lessons/exercise_pattern.h"

#include <fmt/format.h>

namespace dsgd::lessons {

size_t ring_bytes_per_rank(int world, size_t n) {
  if (world <= 1) return 0;
  const size_t chunk = (n + static_cast<size_t>(world) - 1) / static_cast<size_t>(world);
  return 2 * static_cast<size_t>(world - 1) * chunk * sizeof(float);
}

std::string pattern_problem(const std::vector<Event>& events, int world, size_t n, Lang lang) {
  const bool zh = lang == Lang::zh;
  std::vector<size_t> sent(static_cast<size_t>(world), 0);
  for (const Event& e : events) {
    if (e.kind == EventKind::collective_begin)
      return zh ? fmt::format(
                      "秩 {} 调用了 dsgd 自带的 {}：本练习要用 send 和 recv（或 "
                      "isend/irecv）亲手写出环形全归约，而不是交给库。",
                      e.rank, e.op)
                : fmt::format(
                      "rank {} called dsgd's own {}: the exercise is to write the "
                      "ring all-reduce with send and recv (or isend/irecv), not to "
                      "hand it to the library.",
                      e.rank, e.op);
    if (e.kind == EventKind::send_begin && e.rank >= 0 && e.rank < world)
      sent[static_cast<size_t>(e.rank)] += e.bytes;
  }
  const size_t bound = ring_bytes_per_rank(world, n);
  for (int r = 0; r < world; ++r) {
    if (sent[static_cast<size_t>(r)] <= bound) continue;
    const size_t bytes = sent[static_cast<size_t>(r)];
    return zh ? fmt::format(
                    "结果正确，但秩 {} 发送了 {} 字节；环形全归约每个秩最多发送 "
                    "2(R-1) 块、每块至多 ⌈n/R⌉ 个浮点数，即 {} 字节。把所有数据集中到"
                    "一个秩再发回去也能得到正确的和，但那不是环，而且慢（第 5 课的代价表）。",
                    r, bytes, bound)
              : fmt::format(
                    "the values are right, but rank {} sent {} bytes; in a ring "
                    "all-reduce each rank sends 2(R-1) chunks of at most ceil(n/R) "
                    "floats, {} bytes. Gathering everything at one rank and sending it "
                    "back gets the sum too, but it is not the ring, and it is slow "
                    "(lesson 5's cost table).",
                    r, bytes, bound);
  }
  return "";
}

}  // namespace dsgd::lessons
