// `dsgd lesson list` and `dsgd lesson N`: runs a lesson (lessons/) on simulated nodes or
// MPI ranks and prints its transcript beside the lesson's text, section by section, in
// English or Chinese; --step holds every message until Enter; `--check FILE` runs the
// lesson's exercise on a student's file. The lessons themselves live in lessons/.
#pragma once

#include <cstdint>
#include <string>

#include "sim/run_flags.h"

namespace CLI {
class App;
}

namespace dsgd::cli {

struct LessonFlags {
  std::string which;  // "list" or a lesson number
  std::string lang = "en";
  bool step = false;
  bool auto_run = false;
  std::string check;                // a file, or a folder of them
  bool json = false;                // --check's results as JSON
  std::string check_memory = "4G";  // each case's memory limit
  int check_ranks = 8;              // the most ranks a case runs on
  uint64_t seed = 1;
  sim::RunFlags run;  // --backend and the cluster flags
};

void add_lesson_command(CLI::App& app, LessonFlags& flags);
int run_lesson(const LessonFlags& flags);

}  // namespace dsgd::cli
