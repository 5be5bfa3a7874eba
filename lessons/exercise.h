// The exercise of lesson 5, `dsgd lesson 5 --check FILE`: compiles a student's C++ file
// that defines `void my_all_reduce(dsgd::Communicator&, std::span<float>)` (sum, in place)
// into a shared library with the system compiler, loads it, and checks it against the
// exact sum on simulated clusters of 1..8 ranks with vectors of 0, 1, R-1, R+1, 1000 and
// 2^18 floats, and how it communicates (exercise_pattern.h); reports every case, as a grid. Each
// case runs in a child process, so a crash or a hang in the student's code is reported as that
// case's failure instead of ending dsgd. Not a sandbox: the code is trusted.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "lessons/lesson.h"

namespace dsgd::lessons {

struct ExerciseOptions {
  std::string source;       // the student's file
  std::string compiler;     // empty: the compiler dsgd was built with
  std::string include_dir;  // empty: data_dir()/include (core/io/data_dir.h)
  Lang lang = Lang::en;
  int max_ranks = 8;
  std::chrono::milliseconds call_timeout{5000};  // deadline of each blocking call
  std::chrono::seconds case_timeout{60};         // a case running longer is killed
  // A case's process may use this much memory (address space) and case_timeout of CPU
  // time; past either it fails. 0: no memory limit (always so under the sanitizers, whose
  // shadow memory is address space).
  uint64_t memory_bytes = uint64_t{4} << 30;
};

// One case: R ranks, n floats each.
struct ExerciseCase {
  int world = 0;
  size_t n = 0;
  bool passed = false;
  std::string problem;  // why it failed, in the options' language
};

// A graded file: whether it compiled and loaded (else why not), and every case run.
struct ExerciseResult {
  std::string source;
  bool compiled = false;
  std::string error;  // when it did not compile or load: the first lines of why
  std::vector<ExerciseCase> cases;

  int failed() const;
  bool passed() const { return compiled && !cases.empty() && failed() == 0; }
};

// Grades `options.source`, writing the report line by line to `out` as it goes. DataError
// when the file cannot be read. A file that does not compile, or lacks the function, is a
// result with compiled = false and the compiler's or the loader's message.
// Whether a case's memory limit applies in this build: not under ASan or TSan, whose shadow
// memory is address space.
bool memory_limit_applies();

ExerciseResult grade_all_reduce_exercise(const ExerciseOptions& options,
                                         const std::function<void(const std::string&)>& out);

}  // namespace dsgd::lessons
