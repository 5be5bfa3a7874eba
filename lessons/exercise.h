// Grading a lesson's exercise, `dsgd lesson N --check FILE`: compiles a student's C++ file
// with the exercise's shim (exercise_spec.h) into a shared library with the system compiler,
// loads it, and runs every case of the spec's grid on simulated clusters, checking the
// values every rank ends with and how the ranks communicated; reports each rank count's
// first failure with a hint, then the grid of every case and what its failures share. Each
// case runs in a child process with CPU and memory limits, so a crash or a hang in the
// student's code is that case's failure instead of ending dsgd. Not a sandbox: the code is
// trusted.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "lessons/exercise_spec.h"
#include "lessons/lesson.h"

namespace dsgd::lessons {

struct ExerciseOptions {
  std::string source;       // the student's file
  std::string compiler;     // empty: the compiler dsgd was built with
  std::string include_dir;  // empty: data_dir()/include (core/io/data_dir.h)
  Lang lang = Lang::en;
  int max_ranks = 0;  // 0: the spec's; else at most this many (at least the spec's fewest)
  std::chrono::milliseconds call_timeout{5000};  // deadline of each blocking call
  std::chrono::seconds case_timeout{60};         // a case running longer is killed
  // A case's process may use this much memory (address space) and case_timeout of CPU
  // time; past either it fails. 0: no memory limit (always so under the sanitizers, whose
  // shadow memory is address space).
  uint64_t memory_bytes = uint64_t{4} << 30;
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

// Whether a case's memory limit applies in this build: not under ASan or TSan, whose shadow
// memory is address space.
bool memory_limit_applies();

// Grades `options.source` against `spec`, writing the report line by line to `out` as it
// goes. DataError when the file cannot be read. A file that does not compile, or lacks the
// function, is a result with compiled = false and the compiler's or the loader's message.
ExerciseResult grade_exercise(const ExerciseSpec& spec, const ExerciseOptions& options,
                              const std::function<void(const std::string&)>& out);

}  // namespace dsgd::lessons
