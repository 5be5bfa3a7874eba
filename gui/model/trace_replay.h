// Replay: a Chrome trace written by `dsgd train --trace` (simulated or MPI, wall or model
// time base) read back into the Event stream it was written from (core/io/trace.h:
// read_trace_events), so the same Snapshot builder and views show it. Optionally a metrics
// JSONL file (`--metrics`) for the loss curves. Not a trace reader of its own. A trace of
// more than kMaxTraceLanes ranks is shown summarised (core/io/trace_summary.h), as
// `dsgd train --trace` writes one by default.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/events.h"
#include "core/io/trace.h"
#include "gui/model/snapshot.h"

namespace dsgd::gui {

class Replay {
 public:
  // DataError naming `name` ("run.json: not a Chrome trace: ...") for text that is not
  // JSON, not a trace, has malformed dsgd slices, or holds no dsgd events.
  static Replay parse(std::string_view text, const std::string& name);
  static Replay load(const std::string& path);  // DataError also for an unreadable file

  const std::vector<Event>& events() const { return trace_.events; }
  int world() const { return trace_.world; }
  const std::string& name() const { return name_; }
  // Model time when every message carries it (the link model's deterministic clock),
  // else wall time.
  TimeBase time_base() const { return trace_.time_base; }
  double begin_s() const { return trace_.begin_s; }
  double end_s() const { return trace_.end_s; }
  // The recorded run's description (a JSON object), empty when the trace has none.
  const std::string& run_json() const { return trace_.run_json; }
  // When its lanes are groups of ranks (ranks 0 otherwise): as written, or as summarised here.
  const TraceSummary& summary() const { return trace_.summary; }
  // The algorithm of the trace's first all_reduce message (automatic: none), for the
  // snapshot until the time cursor reaches one.
  Algorithm all_reduce_algorithm() const { return all_reduce_algorithm_; }

  Replay() = default;

 private:
  Replay(TraceEvents trace, std::string name);
  void summarize();

  TraceEvents trace_;  // moves, never copies: events point into its names
  std::string name_;
  Algorithm all_reduce_algorithm_ = Algorithm::automatic;
};

// Loss curve points from a metrics JSONL file (one object per line: step, loss, wall_s,
// train_accuracy, test_accuracy). DataError "FILE:LINE: ..." for a malformed line.
Curve load_metrics_curve(const std::string& path);

}  // namespace dsgd::gui
