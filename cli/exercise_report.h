// `dsgd lesson N --check PATH [--json]`: a student's file, its report printed as it is
// graded (exit 0 when every case passes, else 1); or a teacher's folder of submissions, each
// .cpp in it graded in turn (progress on standard error) into one table, CSV on standard
// output: file, compiled, passed, cases failed, cases, the first failure (exit 0 once every
// file is graded, whatever the verdicts). --json prints the results as JSON instead: an
// object for a file, an array for a folder, every case with its ranks, size and problem.
// Not the grading: lessons/exercise.h.
#pragma once

#include <cstdint>
#include <string>

#include "lessons/exercise_spec.h"
#include "lessons/lesson.h"

namespace dsgd::cli {

struct CheckOptions {
  bool json = false;
  uint64_t memory_bytes = uint64_t{4} << 30;  // each case's (lessons::ExerciseOptions)
  int max_ranks = 8;                          // the most ranks a case runs on
  lessons::Lang lang = lessons::Lang::en;
};

int check_exercise(const lessons::ExerciseSpec& spec, const std::string& path,
                   const CheckOptions& options);

}  // namespace dsgd::cli
