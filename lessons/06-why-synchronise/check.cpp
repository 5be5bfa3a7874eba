// How `dsgd lesson 6 --check` grades the exercise (exercise.cpp here): the PyTorch
// tutorial's average_gradients, every rank's gradient replaced by the mean over the ranks.
// dsgd's collectives are allowed (the tutorial calls dist.all_reduce); the values are
// checked, and a wrong one is named: the sum (not divided), or the rank's own gradient
// (nothing exchanged).
#include <fmt/format.h>

#include "lessons/exercise_spec.h"

namespace dsgd::lessons {
namespace {

// Rank r's gradient is (r + 1) (1 + i % 7); the mean over R ranks is (R + 1)/2 (1 + i % 7),
// a multiple of one half: exact in floats, whatever the order of the additions.
float start(int, int, int rank, size_t i) {
  return static_cast<float>((rank + 1) * (1 + static_cast<int>(i % 7)));
}
float sum(int world, size_t i) {
  return static_cast<float>(world * (world + 1) / 2 * (1 + static_cast<int>(i % 7)));
}
float mean(int world, int, int, size_t i) {
  return sum(world, i) / static_cast<float>(world);
}

std::string explain_value(int world, int, int, size_t i, float got, Lang lang) {
  const bool zh = lang == Lang::zh;
  if (got == sum(world, i))
    return zh ? "这是所有秩的和，不是平均：每个秩都要再除以 comm.size()"
              : "that is the sum over the ranks, not the mean: every rank must divide by "
                "comm.size()";
  if (got == sum(world, i) / static_cast<float>(world * world))
    return zh ? "除了两次 comm.size()" : "that is divided by comm.size() twice";
  return "";
}

bool two_or_more(const ExerciseCase& c) {
  return c.world > 1 && c.n > 0;
}

std::string grid_hint(const ExerciseGrid& grid, Lang lang) {
  if (!all_fail(grid, two_or_more) || !only_fails(grid, two_or_more)) return "";
  return lang == Lang::zh ? "从 2 个秩起都失败：先用 all_reduce 把各秩的梯度相加，再除以秩数。"
                          : "It fails whenever there are 2 ranks or more: sum the ranks' "
                            "gradients with all_reduce, then divide by the number of ranks.";
}

}  // namespace

const ExerciseSpec& average_gradients_exercise() {
  static const ExerciseSpec spec{
      .dir = "06-why-synchronise",
      .function = "average_gradients",
      .signature = "void average_gradients(dsgd::Communicator& comm, std::span<float> grads)",
      .columns = {{"n=0", fixed_size<0>},
                  {"n=1", fixed_size<1>},
                  {"n=1000", fixed_size<1000>},
                  {"n=2^18", fixed_size<size_t{1} << 18>}},
      .intro_en =
          "Checking against the exact mean; rank r's gradient is grads[i] = (r + 1) * "
          "(1 + i % 7).",
      .intro_zh = "与精确的平均值比较：秩 r 的梯度为 grads[i] = (r + 1) * (1 + i % 7)。",
      .start = start,
      .expected = mean,
      .tolerance = 1e-5f,  // dividing before the sum rounds each term
      .explain_value = explain_value,
      .grid_hint = grid_hint,
  };
  return spec;
}

}  // namespace dsgd::lessons
