#include "lessons/exercise_spec.h"

#include <fmt/format.h>

namespace dsgd::lessons {

std::string library_call_problem(const std::vector<Event>& events, const char* task_en,
                                 const char* task_zh, Lang lang) {
  for (const Event& e : events) {
    if (e.kind != EventKind::collective_begin) continue;
    return lang == Lang::zh ? fmt::format(
                                  "秩 {} 调用了 dsgd 自带的 {}：本练习要用 send 和 recv（或 "
                                  "isend/irecv）亲手写出{}，而不是交给库。",
                                  e.rank, e.op, task_zh)
                            : fmt::format(
                                  "rank {} called dsgd's own {}: the exercise is to write {} "
                                  "with send and recv (or isend/irecv), not to hand it to the "
                                  "library.",
                                  e.rank, e.op, task_en);
  }
  return "";
}

std::vector<size_t> bytes_sent(const std::vector<Event>& events, int world) {
  std::vector<size_t> sent(static_cast<size_t>(world), 0);
  for (const Event& e : events)
    if (e.kind == EventKind::send_begin && e.rank >= 0 && e.rank < world)
      sent[static_cast<size_t>(e.rank)] += e.bytes;
  return sent;
}

std::vector<int> sends_posted(const std::vector<Event>& events, int world) {
  std::vector<int> sends(static_cast<size_t>(world), 0);
  for (const Event& e : events)
    if (e.kind == EventKind::send_begin && e.rank >= 0 && e.rank < world)
      ++sends[static_cast<size_t>(e.rank)];
  return sends;
}

bool only_fails(const ExerciseGrid& grid, bool (*match)(const ExerciseCase&)) {
  bool any = false;
  for (const std::vector<ExerciseCase>& row : grid)
    for (const ExerciseCase& c : row) {
      if (c.passed) continue;
      if (!match(c)) return false;
      any = true;
    }
  return any;
}

bool all_fail(const ExerciseGrid& grid, bool (*match)(const ExerciseCase&)) {
  bool any = false;
  for (const std::vector<ExerciseCase>& row : grid)
    for (const ExerciseCase& c : row) {
      if (!match(c)) continue;
      if (c.passed) return false;
      any = true;
    }
  return any;
}

}  // namespace dsgd::lessons
