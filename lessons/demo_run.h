// A small program a lesson runs on a cluster of its own, so that the lesson's own ranks go
// on whatever it does (lesson 3's deadlocks and timeout). Its blocking calls are told one
// line each (LogItem::Kind::call): what each rank called and whether the call returned, so
// that `dsgd lesson --step` goes through the demo a call at a time before its outcome.
#pragma once

#include <vector>

#include "core/events.h"
#include "lessons/lesson.h"
#include "sim/cluster.h"

namespace dsgd::lessons {

// One blocking call of a demo's rank, from its events.
struct DemoCall {
  int rank = 0;
  bool send = false;  // else a receive
  int peer = -1;
  uint64_t bytes = 0;     // send: its payload; recv: what arrived (0 while it waits)
  bool returned = false;  // false: it was still waiting when the run ended
};

// Each rank's calls in program order, interleaved a call at a time in rank order (rank 0's
// first, rank 1's first, rank 0's second, ...): the order a reader follows the program in.
std::vector<DemoCall> demo_calls(const std::vector<Event>& events, int world);

// The line that tells `call` (`eager_bytes`: the run's eager limit), in `lang`.
std::string demo_call_line(const DemoCall& call, size_t eager_bytes, Lang lang);

// Rank 0 runs `fn` on a cluster of `options.nodes` nodes of its own, tells its calls (a
// call line each), then rethrows what the run threw (DeadlockError, TimeoutError). Other
// ranks return at once.
void run_demo(LessonContext& ctx, const sim::ClusterOptions& options, const sim::NodeFunction& fn);

}  // namespace dsgd::lessons
