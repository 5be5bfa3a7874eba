// The exercise of lesson 5, `dsgd lesson 5 --check FILE`: compiles a student's C++ file
// that defines `void my_all_reduce(dsgd::Communicator&, std::span<float>)` (sum, in place)
// into a shared library with the system compiler, loads it, and checks it against the
// exact sum on simulated clusters of 1..8 ranks with vectors of 0, 1, R-1, R+1, 1000 and
// 2^18 floats, and how it communicates (exercise_pattern.h); reports every case, as a grid. Each case runs in a child process, so a crash or a hang in the student's code is
// reported as that case's failure instead of ending dsgd. Not a sandbox: the code is trusted.
#pragma once

#include <chrono>
#include <functional>
#include <string>

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
};

// Writes the report line by line to `out` as it goes. Returns true when every case passed.
// DataError when the file cannot be read. A file that does not compile, or lacks the
// function, fails the check with the compiler's or the loader's message.
bool check_all_reduce_exercise(const ExerciseOptions& options,
                               const std::function<void(const std::string&)>& out);

}  // namespace dsgd::lessons
