// Replay: a Chrome trace written by `dsgd train --trace` (simulated or MPI, wall or model
// time base) read back into the Event stream it was written from, so the same Snapshot
// builder and views show it. Optionally a metrics JSONL file (`--metrics`) for the loss
// curves. Not a general trace reader: it understands dsgd's own slices (cat p2p, compute,
// collective, step) and skips everything else.
#pragma once

#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "core/events.h"
#include "core/io/trace.h"
#include "gui/snapshot.h"

namespace dsgd::gui {

class Replay {
 public:
  // DataError naming `name` ("run.json: not a Chrome trace: ...") for text that is not
  // JSON, not a trace, has malformed dsgd slices, or holds no dsgd events.
  static Replay parse(std::string_view text, const std::string& name);
  static Replay load(const std::string& path);  // DataError also for an unreadable file

  const std::vector<Event>& events() const { return events_; }
  int world() const { return world_; }
  const std::string& name() const { return name_; }
  // Model time when every message carries it (the link model's deterministic clock),
  // else wall time.
  TimeBase time_base() const { return time_base_; }
  double begin_s() const { return begin_s_; }
  double end_s() const { return end_s_; }

  Replay() = default;
  Replay(Replay&&) = default;
  Replay& operator=(Replay&&) = default;
  Replay(const Replay&) = delete;  // events point into names_
  Replay& operator=(const Replay&) = delete;

 private:
  const char* intern(const std::string& s);

  std::vector<Event> events_;
  std::deque<std::string> names_;  // stable storage for Event::op
  std::string name_;
  int world_ = 0;
  TimeBase time_base_ = TimeBase::wall;
  double begin_s_ = 0, end_s_ = 0;
};

// Loss curve points from a metrics JSONL file (one object per line: step, loss, wall_s,
// train_accuracy, test_accuracy). DataError "FILE:LINE: ..." for a malformed line.
Curve load_metrics_curve(const std::string& path);

}  // namespace dsgd::gui
