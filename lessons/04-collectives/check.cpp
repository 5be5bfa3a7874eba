// How `dsgd lesson 4 --check` grades the exercise (exercise.cpp here): a binomial-tree
// broadcast from any root, written with send and recv. Right values are not enough: no rank
// may call one of dsgd's collectives, no rank may send more than ceil(log2 R) messages (the
// root of a loop over the ranks sends R - 1), and no rank may be more than ceil(log2 R) hops
// from the root (a chain, each rank passing the data on to the next, is R - 1 hops deep).
#include <bit>

#include <fmt/format.h>

#include "lessons/exercise_spec.h"

namespace dsgd::lessons {
namespace {

constexpr size_t kLarge = size_t{1} << 18;

// ceil(log2 R): the rounds of a binomial tree on R ranks.
int rounds(int world) {
  return static_cast<int>(std::bit_width(static_cast<unsigned>(world - 1)));
}

// The root holds (root + 1) (1 + i % 7); every other rank starts with -(rank + 1).
float start(int world, int root, int rank, size_t i) {
  if (rank == root) return static_cast<float>((root + 1) * (1 + static_cast<int>(i % 7)));
  (void)world;
  return static_cast<float>(-(rank + 1));
}
float roots_values(int world, int root, int, size_t i) {
  return start(world, root, root, i);
}

std::string explain_value(int world, int root, int rank, size_t i, float got, Lang lang) {
  const bool zh = lang == Lang::zh;
  if (got == start(world, root, rank, i))
    return zh ? "它仍是该秩自己的初始值：数据没有到达它"
              : "it still holds its own starting value: "
                "the data never reached it";
  if (root != 0 && got == start(world, 0, 0, i))
    return zh ? "这是根为 0 时的值：不要假定根是秩 0"
              : "that is what root 0 would hold: do not assume the root is rank 0";
  return "";
}

// Each rank's distance from the root: 1 + its parent's, where its parent is the rank its
// first receive came from; -1 for a rank that received nothing (or from a cycle).
std::vector<int> hops(const std::vector<Event>& events, int world, int root) {
  std::vector<int> parent(static_cast<size_t>(world), -1), hop(static_cast<size_t>(world), -1);
  for (const Event& e : events)
    if (e.kind == EventKind::recv_end && e.rank >= 0 && e.rank < world && e.peer >= 0 &&
        e.peer < world && parent[static_cast<size_t>(e.rank)] < 0)
      parent[static_cast<size_t>(e.rank)] = e.peer;
  hop[static_cast<size_t>(root)] = 0;
  for (int pass = 0; pass < world; ++pass)  // a parent's hop is known after at most R passes
    for (int r = 0; r < world; ++r) {
      const int p = parent[static_cast<size_t>(r)];
      if (r != root && p >= 0 && hop[static_cast<size_t>(p)] >= 0)
        hop[static_cast<size_t>(r)] = hop[static_cast<size_t>(p)] + 1;
    }
  return hop;
}

std::string too_many_sends(int rank, int sends, int world, Lang lang) {
  return lang == Lang::zh ? fmt::format(
                                "结果正确，但秩 {} 发送了 {} 条消息；二项树广播中每个秩最多发送 "
                                "⌈log2 R⌉ = {} 条。根在循环里逐个发给每个秩不是树。",
                                rank, sends, rounds(world))
                          : fmt::format(
                                "the values are right, but rank {} sent {} messages; in a binomial "
                                "tree no rank sends more than ceil(log2 R) = {}. A root sending to "
                                "every rank in a loop is not a tree.",
                                rank, sends, rounds(world));
}

std::string too_deep(int rank, int depth, int world, Lang lang) {
  return lang == Lang::zh
             ? fmt::format(
                   "结果正确，但数据经过 {} 跳才到达秩 {}；二项树中每个秩离根至多 "
                   "⌈log2 R⌉ = {} 跳：每一轮，已经有数据的秩都要向一个新秩发送。",
                   depth, rank, rounds(world))
             : fmt::format(
                   "the values are right, but the data took {} hops to reach rank {}; "
                   "in a binomial tree no rank is more than ceil(log2 R) = {} hops from "
                   "the root: in every round, every rank that has the data sends it on.",
                   depth, rank, rounds(world));
}

std::string pattern(const std::vector<Event>& events, const ExerciseCase& c, Lang lang) {
  if (std::string p = library_call_problem(events, "the broadcast", "广播", lang); !p.empty())
    return p;
  const std::vector<int> sends = sends_posted(events, c.world);
  for (int r = 0; r < c.world; ++r)
    if (sends[static_cast<size_t>(r)] > rounds(c.world))
      return too_many_sends(r, sends[static_cast<size_t>(r)], c.world, lang);
  const std::vector<int> hop = hops(events, c.world, c.root);
  for (int r = 0; r < c.world; ++r)
    if (hop[static_cast<size_t>(r)] > rounds(c.world))
      return too_deep(r, hop[static_cast<size_t>(r)], c.world, lang);
  return "";
}

std::string case_hint(const ExerciseCase& c, Lang lang) {
  const bool zh = lang == Lang::zh;
  if (c.world == 1)
    return zh ? "只有一个秩：根已经拥有数据，什么都不用做。"
              : "A world of one rank: the root already holds the data; nothing to do.";
  if (c.root != 0)
    return zh ? "从根开始给秩重新编号：rel = (rank - root + R) % R，发送给 "
                "(rel + k + root) % R。"
              : "Number the ranks from the root, rel = (rank - root + R) % R, and send to the "
                "real rank (rel + k + root) % R.";
  return zh ? "第 k = 1, 2, 4, ... 轮：rel < k 的秩发给 rel + k（如果存在），k <= rel < 2k "
              "的秩从 rel - k 接收。"
            : "In round k = 1, 2, 4, ...: a rank with rel < k sends to rel + k (if it exists); "
              "a rank with k <= rel < 2k receives from rel - k.";
}

bool root_not_zero(const ExerciseCase& c) {
  return c.root != 0;
}

std::string grid_hint(const ExerciseGrid& grid, Lang lang) {
  if (!only_fails(grid, root_not_zero)) return "";
  return lang == Lang::zh ? "只有根不是 0 时失败：用相对于根的编号 rel = (rank - root + R) % R "
                            "计算，发送和接收时再换回真实的秩。"
                          : "It fails only when the root is not rank 0: work with ranks relative "
                            "to the root, rel = (rank - root + R) % R, and turn them back into "
                            "real ranks to send and receive.";
}

}  // namespace

const ExerciseSpec& tree_broadcast_exercise() {
  static const ExerciseSpec spec{
      .dir = "04-collectives",
      .function = "tree_broadcast",
      .signature = "void tree_broadcast(dsgd::Communicator& comm, std::span<float> data, int root)",
      .columns = {{"n=0", fixed_size<0>},
                  {"n=1", fixed_size<1>},
                  {"n=1000", fixed_size<1000>},
                  {"root=R-1", fixed_size<1000>, [](int w) { return w - 1; }},
                  {"root=R/2", fixed_size<1000>, [](int w) { return w / 2; }},
                  {"n=2^18", fixed_size<kLarge>}},
      .intro_en =
          "Checking that every rank ends with the root's values; the root starts with "
          "data[i] = (root + 1) * (1 + i % 7), rank r with -(r + 1).",
      .intro_zh =
          "检查每个秩最后是否拿到根的值；根开始时 data[i] = (root + 1) * (1 + i % 7)，"
          "其余秩 r 为 -(r + 1)。",
      .start = start,
      .expected = roots_values,
      .explain_value = explain_value,
      .pattern = pattern,
      .case_hint = case_hint,
      .grid_hint = grid_hint,
  };
  return spec;
}

}  // namespace dsgd::lessons
