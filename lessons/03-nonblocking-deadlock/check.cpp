// How `dsgd lesson 3 --check` grades the exercise (exercise.cpp here): fix the deadlock of
// a ring shift. After shift_right every rank holds what its left neighbour held. The file
// handed out sends, then receives: right for small vectors, a deadlock once a message is
// above the eager limit, when every rank waits in send for a receive nobody has posted. The
// checker runs it up to 2^18 floats (1 MiB) and checks that each rank sends its vector once.
#include <fmt/format.h>

#include "lessons/exercise_spec.h"

namespace dsgd::lessons {
namespace {

constexpr size_t kLarge = size_t{1} << 18;    // 1 MiB: above the eager limit (64 KiB)
constexpr size_t kAtLimit = size_t{1} << 14;  // 64 KiB: still eager

// Rank r starts with 100 (r + 1) + i % 7: each rank's values are its own.
float start(int, int, int rank, size_t i) {
  return static_cast<float>(100 * (rank + 1) + static_cast<int>(i % 7));
}
float from_left(int world, int root, int rank, size_t i) {
  return start(world, root, (rank - 1 + world) % world, i);
}

std::string explain_value(int world, int root, int rank, size_t i, float got, Lang lang) {
  if (world > 2 && got == start(world, root, (rank + 1) % world, i))
    return lang == Lang::zh ? "这是右邻居的值：方向反了，应从左邻居（rank - 1）接收"
                            : "that is the right neighbour's value: the shift went the wrong "
                              "way; receive from the left (rank - 1)";
  return "";
}

std::string pattern(const std::vector<Event>& events, const ExerciseCase& c, Lang lang) {
  if (std::string p = library_call_problem(events, "the shift", "这次移位", lang); !p.empty())
    return p;
  const std::vector<size_t> sent = bytes_sent(events, c.world);
  for (int r = 0; r < c.world; ++r) {
    if (sent[static_cast<size_t>(r)] <= c.n * sizeof(float)) continue;
    return lang == Lang::zh
               ? fmt::format(
                     "结果正确，但秩 {} 发送了 {} 字节；移位中每个秩只需把自己的 {} "
                     "字节发送一次。",
                     r, sent[static_cast<size_t>(r)], c.n * sizeof(float))
               : fmt::format(
                     "the values are right, but rank {} sent {} bytes; in a shift each "
                     "rank sends its {} bytes once.",
                     r, sent[static_cast<size_t>(r)], c.n * sizeof(float));
  }
  return "";
}

bool is_large(const ExerciseCase& c) {
  return c.n > kAtLimit;
}

std::string grid_hint(const ExerciseGrid& grid, Lang lang) {
  if (!only_fails(grid, is_large)) return "";
  return lang == Lang::zh
             ? "只有超过 eager 上限（64 KiB）的向量失败：每个秩都在 send "
               "里等对方开始接收，而对方也在 send 里等——本课的死锁。"
               "用 irecv 先挂上接收，或用 isend 发送再 recv，或让偶数秩先发、奇数秩先收。"
             : "Only vectors above the eager limit (64 KiB) fail: every rank waits in send for "
               "a receive that its neighbour, also in send, never posts: this lesson's "
               "deadlock. Post the receive first (irecv), or isend then recv, or let even "
               "ranks send first and odd ranks receive first.";
}

}  // namespace

const ExerciseSpec& ring_shift_exercise() {
  static const ExerciseSpec spec{
      .dir = "03-nonblocking-deadlock",
      .function = "shift_right",
      .signature = "void shift_right(dsgd::Communicator& comm, std::span<float> data)",
      .min_ranks = 2,
      .columns = {{"n=0", fixed_size<0>},
                  {"n=1", fixed_size<1>},
                  {"n=1000", fixed_size<1000>},
                  {"n=2^14", fixed_size<kAtLimit>},
                  {"n=2^18", fixed_size<kLarge>}},
      .intro_en =
          "Checking that every rank ends with its left neighbour's values; rank r starts "
          "with data[i] = 100 (r + 1) + i % 7.",
      .intro_zh = "检查每个秩最后是否拿到左邻居的值；秩 r 开始时 data[i] = 100 (r + 1) + i % 7。",
      .start = start,
      .expected = from_left,
      .explain_value = explain_value,
      .pattern = pattern,
      .grid_hint = grid_hint,
  };
  return spec;
}

}  // namespace dsgd::lessons
