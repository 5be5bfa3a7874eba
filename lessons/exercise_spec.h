// What one lesson's exercise is and how it is graded (the grading itself: exercise.h). A
// student writes one function over a span of floats, such as
// `void my_all_reduce(dsgd::Communicator&, std::span<float>)`; the lesson's directory holds
// the file handed out (exercise.cpp), one answer (solution.cpp) and the shim compiled with the
// student's file (check_shim.cpp), which defines
// `extern "C" void dsgd_exercise_entry(dsgd::Communicator*, float* data, size_t n, int root)`.
// A spec says which cases to run (a grid: rank counts x columns), what every rank holds
// before and must hold after, which communication the exercise forbids, and what a failure
// suggests. Each lesson with an exercise defines its spec in its directory (NN-name/check.cpp).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/events.h"
#include "lessons/lesson.h"

namespace dsgd::lessons {

// How a case failed: wrong values, right values by a forbidden pattern, or an error (a
// deadlock, a passed deadline, a crash).
enum class Failure : char { values = 'v', pattern = 'p', error = 'e' };

// One case: R ranks, n floats each, and the root rank passed to the function (0 where the
// exercise has none).
struct ExerciseCase {
  int world = 0;
  size_t n = 0;
  int root = 0;
  bool passed = false;
  Failure kind = Failure::error;  // when it failed
  std::string problem;            // why it failed, in the options' language
};

// The cases of every rank count, row by row (the first row has spec.min_ranks ranks), in
// the spec's columns.
using ExerciseGrid = std::vector<std::vector<ExerciseCase>>;

// A column of the grid: its header and the case it is on R ranks.
struct ExerciseColumn {
  const char* header;                // "n=R-1", "root=R-1"
  size_t (*size)(int world);         // n
  int (*root)(int world) = nullptr;  // null: root 0
};

// A column's size that does not depend on R: {"n=1000", fixed_size<1000>}.
template <size_t N>
size_t fixed_size(int) {
  return N;
}

struct ExerciseSpec {
  const char* dir = "";       // "05-own-allreduce", under lessons/
  const char* function = "";  // "my_all_reduce": a loader's message naming it means it is missing
  const char* signature =
      "";  // "void my_all_reduce(dsgd::Communicator& comm, std::span<float> data)"
  int min_ranks = 1;
  int max_ranks = 8;
  std::vector<ExerciseColumn> columns;
  // The line shown before the cases run: what the values are checked against.
  const char* intro_en = "";
  const char* intro_zh = "";
  // What rank `rank` of `world` holds at i before the call, and must hold after it.
  float (*start)(int world, int root, int rank, size_t i) = nullptr;
  float (*expected)(int world, int root, int rank, size_t i) = nullptr;
  // How far a value may be from `expected`, relative to it: 0 (exact) where the values are
  // small integers that any order of additions sums exactly; more where the order may round.
  float tolerance = 0;
  // Optional: what a wrong value `got` suggests, as a sentence; "" for nothing.
  std::string (*explain_value)(int world, int root, int rank, size_t i, float got,
                               Lang lang) = nullptr;
  // Optional: "" when a passing case's events keep the exercise's rules (events.h), else
  // what broke them and what to do instead.
  std::string (*pattern)(const std::vector<Event>& events, const ExerciseCase& c,
                         Lang lang) = nullptr;
  // Optional: what a failed case suggests to look at, after the hints every exercise shares
  // (memory, sends above the eager limit); "" for nothing.
  std::string (*case_hint)(const ExerciseCase& c, Lang lang) = nullptr;
  // Optional: what the grid's failures have in common, when they have something; "" else.
  std::string (*grid_hint)(const ExerciseGrid& grid, Lang lang) = nullptr;
};

// The first of dsgd's collectives a rank called, as the reason a case fails: the exercise
// is to write `task` (in `lang`) with send and recv. "" when no rank called one.
std::string library_call_problem(const std::vector<Event>& events, const char* task_en,
                                 const char* task_zh, Lang lang);

// Payload bytes each of `world` ranks posted for sending, and how many sends.
std::vector<size_t> bytes_sent(const std::vector<Event>& events, int world);
std::vector<int> sends_posted(const std::vector<Event>& events, int world);

// Whether some case of `grid` failed and every failed case is one `match` picks.
bool only_fails(const ExerciseGrid& grid, bool (*match)(const ExerciseCase&));
// Whether `match` picks some case of `grid` and every case it picks failed.
bool all_fail(const ExerciseGrid& grid, bool (*match)(const ExerciseCase&));

// The exercises of lessons 3, 4, 5 and 6 (NN-name/check.cpp).
const ExerciseSpec& ring_shift_exercise();
const ExerciseSpec& tree_broadcast_exercise();
const ExerciseSpec& ring_all_reduce_exercise();
const ExerciseSpec& average_gradients_exercise();

}  // namespace dsgd::lessons
