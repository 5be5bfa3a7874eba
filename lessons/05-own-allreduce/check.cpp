// How `dsgd lesson 5 --check` grades the exercise (exercise.cpp here): the ring all-reduce,
// written with send and recv. Right values are not enough: no rank may call one of dsgd's
// collectives (that hands the work to the library), and no rank may send more than a ring
// does, 2(R-1) chunks of at most ceil(n/R) floats: gathering everything at one rank and
// sending it back gets the sum too, and shows as one rank sending R-1 times the vector.
#include <fmt/format.h>

#include "lessons/exercise_spec.h"

namespace dsgd::lessons {
namespace {

// 2^18 floats (1 MiB): on up to 8 ranks each chunk is above the eager limit (64 KiB), so a
// ring whose ranks all send before they receive deadlocks, as under Open MPI.
constexpr size_t kLarge = size_t{1} << 18;

// Rank r starts with x_r[i] = (r + 1) * (1 + i % 7): small integers, so the sum is exact
// in any order of additions, and every rank's contribution is different.
float start(int, int, int rank, size_t i) {
  return static_cast<float>((rank + 1) * (1 + static_cast<int>(i % 7)));
}
float sum(int world, int, int, size_t i) {
  return static_cast<float>(world * (world + 1) / 2 * (1 + static_cast<int>(i % 7)));
}

// A value between the rank's own and the full sum: some ranks' shares are missing.
std::string explain_value(int world, int root, int rank, size_t i, float got, Lang lang) {
  if (got == start(world, root, rank, i) || got <= 0 || got >= sum(world, root, rank, i)) return "";
  return lang == Lang::zh ? "这是部分和：有些秩的份额没有加进来；检查全收集每一步发送的块"
                            "（r + 1 - s）是否是已完成的那一块"
                          : "that is a partial sum: some ranks' shares are missing; check that "
                            "each all-gather step sends a finished chunk (r + 1 - s)";
}

// The most bytes a rank of a ring all-reduce of n floats on R ranks sends.
size_t ring_bytes_per_rank(int world, size_t n) {
  if (world <= 1) return 0;
  const size_t chunk = (n + static_cast<size_t>(world) - 1) / static_cast<size_t>(world);
  return 2 * static_cast<size_t>(world - 1) * chunk * sizeof(float);
}

std::string pattern(const std::vector<Event>& events, const ExerciseCase& c, Lang lang) {
  if (std::string p = library_call_problem(events, "the ring all-reduce", "环形全归约", lang);
      !p.empty())
    return p;
  const size_t bound = ring_bytes_per_rank(c.world, c.n);
  const std::vector<size_t> sent = bytes_sent(events, c.world);
  for (int r = 0; r < c.world; ++r) {
    if (sent[static_cast<size_t>(r)] <= bound) continue;
    return lang == Lang::zh
               ? fmt::format(
                     "结果正确，但秩 {} 发送了 {} 字节；环形全归约每个秩最多发送 "
                     "2(R-1) 块、每块至多 ⌈n/R⌉ 个浮点数，即 {} 字节。把所有数据集中到"
                     "一个秩再发回去也能得到正确的和，但那不是环，而且慢（第 5 课的代价表）。",
                     r, sent[static_cast<size_t>(r)], bound)
               : fmt::format(
                     "the values are right, but rank {} sent {} bytes; in a ring "
                     "all-reduce each rank sends 2(R-1) chunks of at most ceil(n/R) "
                     "floats, {} bytes. Gathering everything at one rank and sending it "
                     "back gets the sum too, but it is not the ring, and it is slow "
                     "(lesson 5's cost table).",
                     r, sent[static_cast<size_t>(r)], bound);
  }
  return "";
}

// What a failed case's world and size suggest to look at. Sizes that are not a multiple of R
// say nothing here: a bug elsewhere fails those cases too, and grid_hint names them when the
// failures are confined to them.
std::string case_hint(const ExerciseCase& c, Lang lang) {
  const bool zh = lang == Lang::zh;
  if (c.n == 0)
    return zh ? "空向量 (n = 0) 也必须能工作：没有数据要发送，或者只发送空消息。"
              : "An empty vector (n = 0) must work too: nothing to send, or empty messages.";
  if (c.world == 1)
    return zh ? "只有一个秩 (rank) 的世界：没有邻居，数据本身就是总和。"
              : "A world of one rank: there is no neighbour, the data already are the sum.";
  return zh ? "检查每一步发送和接收的是哪一块，以及累加是否只做了一次。"
            : "Check which chunk each step sends and receives, and that each is added once.";
}

bool has_data_to_combine(const ExerciseCase& c) {
  return c.world > 1 && c.n > 0;
}
bool is_large(const ExerciseCase& c) {
  return c.n == kLarge;
}
bool is_uneven(const ExerciseCase& c) {
  return c.n % static_cast<size_t>(c.world) != 0;
}
bool is_short(const ExerciseCase& c) {
  return c.n > 0 && c.n < static_cast<size_t>(c.world);
}

// What the grid's failures share: every case with data to combine (the exercise as handed
// out), only the size above the eager limit (sends that wait for their receives), only sizes
// below R (empty chunks), or only sizes that are not a multiple of R (the chunks' bounds).
std::string grid_hint(const ExerciseGrid& grid, Lang lang) {
  const bool zh = lang == Lang::zh;
  // Exactly those cases: one that fails with nothing to combine (R = 1, n = 0) fails for
  // another reason, its own line says which (a library call, too many bytes).
  if (grid.size() > 1 && all_fail(grid, has_data_to_combine) &&
      only_fails(grid, has_data_to_combine))
    return zh ? "从 2 "
                "个秩起，只要有数据就失败：检查每个秩是否把块发给右邻居，并把从左邻居收到的块加到自"
                "己的块上。"
              : "It fails whenever there are 2 ranks or more and data to combine: check that "
                "each rank sends a chunk to its right neighbour and adds the chunk it receives "
                "from the left to its own.";
  if (only_fails(grid, is_large))
    return zh ? "只有最大的向量（1 MiB）失败：各秩同时阻塞在超过 eager 上限的 send "
                "里。先挂上接收（irecv），或用 "
                "isend 发送。"
              : "Only the largest vector (1 MiB) fails: every rank blocks at once in a send above "
                "the eager limit. Post the receive first (irecv), or send with isend.";
  if (only_fails(grid, is_short))
    return zh ? "只有 0 < n < R 时失败：有些块 (chunk) "
                "是空的，有些只有一个元素；检查空块的发送和接收。"
              : "It fails exactly when 0 < n < R: some chunks are empty and some hold one "
                "element; check that empty chunks are sent and received too.";
  if (only_fails(grid, is_uneven))
    return zh ? "只有 n 不是 R "
                "的倍数时失败：检查块的边界（n*c/R）和最后一块，是否有元素被漏掉或加了两次。"
              : "It fails exactly when n is not a multiple of R: check the chunks' bounds "
                "(n*c/R) and the last chunk, for elements missed or added twice.";
  return "";
}

}  // namespace

const ExerciseSpec& ring_all_reduce_exercise() {
  static const ExerciseSpec spec{
      .dir = "05-own-allreduce",
      .function = "my_all_reduce",
      .signature = "void my_all_reduce(dsgd::Communicator& comm, std::span<float> data)",
      .columns = {{"n=0", fixed_size<0>},
                  {"n=1", fixed_size<1>},
                  {"n=R-1", [](int w) { return static_cast<size_t>(w - 1); }},
                  {"n=R+1", [](int w) { return static_cast<size_t>(w + 1); }},
                  {"n=1000", fixed_size<1000>},
                  {"n=2^18", fixed_size<kLarge>}},
      .intro_en =
          "Checking against the exact sum; rank r starts with data[i] = (r + 1) * (1 + i "
          "% 7).",
      .intro_zh = "与精确的和比较：每个秩开始时 data[i] = (rank + 1) * (1 + i % 7)。",
      .start = start,
      .expected = sum,
      .explain_value = explain_value,
      .pattern = pattern,
      .case_hint = case_hint,
      .grid_hint = grid_hint,
  };
  return spec;
}

}  // namespace dsgd::lessons
