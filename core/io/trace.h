// Chrome trace event JSON from the event stream: opens in the Perfetto UI and in
// chrome://tracing. One process per rank (pid = rank), a "compute" lane (steps enclosing
// forward_backward and update) and a "communication" lane (collectives enclosing their
// sends and receives), flow arrows from each send to its receive. Plus the tools that read
// traces back: into the event stream again (the GUI's replay), merge per-rank files (MPI
// runs) into one, and check a trace's consistency.
// Not a viewer and not a general JSON trace library: it reads back what it writes.
#pragma once

#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/events.h"

namespace dsgd {

// Which clock gives `ts`: wall time (seconds since the run's common epoch), or model time
// (the link model's clock; every event must then carry model_s >= 0). Model time puts many
// events at one instant, so there ties are broken in causal order by 10 ns steps (each
// event after its rank's previous one, each receive after its send); args keep the exact
// model_s.
enum class TimeBase { wall, model };

const char* to_string(TimeBase base);
TimeBase parse_time_base(const std::string& text);  // "wall" | "model"; UsageError otherwise

// A summarised trace's groups (core/io/trace_summary.h): `ranks` ranks shown as `groups`
// lanes. ranks 0: not a summary, a lane per rank.
struct TraceSummary {
  int ranks = 0, groups = 0;
};

struct TraceOptions {
  TimeBase time_base = TimeBase::wall;
  // The run's description, a serialized JSON object, written into otherData as "run"
  // verbatim so that a replay shows the recorded run's settings; empty: none.
  std::string run_json;
  // Ranks in the run, which the collectives' schedules depend on; 0: the highest rank or
  // peer in the events + 1, which a per-rank file (an MPI rank's) may undercount.
  int world = 0;
  TraceSummary summary;  // written into otherData as "summary" when ranks > 0
};

// The whole trace document for `events` (any order; several ranks or one). Sends and
// receives are "X" slices with args {dir, src, dst, tag, k}: k counts the messages from src
// to dst with that tag, so the k-th send pairs with the k-th receive (messages between one
// pair with one tag arrive in send order); a collective's messages add where they stand in
// it {collective, phase, step, steps, chunk, segment, segments, contributions} (the fields
// message_phase.h knows; a receive whose send is not in `events` has none). Flow arrows join every
// pair whose two ends are both in `events`. Where asynchronous operations overlap so that slices
// would not nest, the later ones move to extra lanes
// ("communication (overlap)"). UsageError for TimeBase::model when an event has no model time.
std::string trace_json(const std::vector<Event>& events, const TraceOptions& options = {});

// An EventSink that keeps every event and writes the trace at the end. Thread-safe: ranks
// and I/O threads may call on_event at once.
class ChromeTraceWriter : public EventSink {
 public:
  explicit ChromeTraceWriter(TraceOptions options = {}) : options_(std::move(options)) {}
  void on_event(const Event& event) override;
  size_t size() const;
  void set_world(int world);  // TraceOptions::world, once the run knows it
  // With more ranks than `groups` (> 0), write() summarises them into that many lanes of
  // consecutive ranks (core/io/trace_summary.h); 0, the default: a lane per rank.
  void set_lane_groups(int groups);
  // Writes trace_json(events) to path atomically (DataError when it cannot be written).
  // May be called more than once (e.g. after a failed run too); each writes everything so far.
  void write(const std::string& path) const;

 private:
  TraceOptions options_;
  int groups_ = 0;
  mutable std::mutex mutex_;
  std::vector<Event> events_;
};

// A trace read back into the event stream it was written from (what trace_json drew as
// slices becomes begin and end events again, in causal order per rank), for the GUI's
// replay. Events' op strings point into `names`, so it moves but does not copy.
struct TraceEvents {
  std::vector<Event> events;
  std::deque<std::string> names;
  int world = 0;  // the highest rank or peer + 1
  // Model time when every message carries it (the link model's deterministic clock), else
  // wall time; events without model time (send ends) then take their predecessor's.
  TimeBase time_base = TimeBase::wall;
  double begin_s = 0, end_s = 0;  // the events' span on that time base
  std::string run_json;           // otherData's "run", serialized; empty when absent
  TraceSummary summary;           // otherData's "summary"; ranks 0 when absent

  TraceEvents() = default;
  TraceEvents(TraceEvents&&) = default;
  TraceEvents& operator=(TraceEvents&&) = default;
  TraceEvents(const TraceEvents&) = delete;
  TraceEvents& operator=(const TraceEvents&) = delete;
};

// DataError naming `name` ("run.json: not a Chrome trace: ...") for text that is not JSON,
// not a trace, has malformed dsgd slices, or holds no dsgd events. Understands dsgd's own
// slices (cats p2p, compute, collective, step, pending, note) and skips everything else.
TraceEvents read_trace_events(std::string_view text, const std::string& name);
TraceEvents load_trace_events(const std::string& path);  // DataError also when unreadable

// Joins trace files (e.g. one per MPI rank, each holding its own ranks) into one and draws
// the flow arrows between them again, pairing sends and receives by {src, dst, tag, k}.
// The first input's run description ("run" in otherData) is kept.
// DataError naming the file for a missing or malformed input ("run.json: not a Chrome
// trace: ..."), for a rank present in two inputs, or for inputs on different time bases.
void merge_traces(const std::vector<std::string>& inputs, const std::string& output);

// Where one rank writes its own trace when each rank is a process (MPI ranks, dsgd node,
// the PyTorch backend): "run.json" -> "run.rank3.json"; merge_traces joins them.
std::string per_rank_path(const std::string& path, int rank);

// What check_trace found. Problems are inconsistencies (a send without exactly one arrow,
// slices that overlap without nesting, time running backwards on a lane, missing names).
struct TraceCheck {
  size_t ranks = 0;
  size_t slices = 0;  // "X" events of all kinds
  size_t sends = 0, receives = 0, flows = 0;
  size_t external_sends = 0;     // sends to ranks not in this trace (a per-rank file)
  size_t external_receives = 0;  // receives from ranks not in this trace
  std::vector<std::string> problems;
  bool ok() const { return problems.empty(); }
};

// DataError naming `name` when the text is not JSON or not a Chrome trace at all.
TraceCheck check_trace_text(std::string_view text, const std::string& name);
TraceCheck check_trace_file(const std::string& path);

}  // namespace dsgd
