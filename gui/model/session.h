// SimSession: one simulated run inside the window. It runs sim::run_cluster with train()
// (or an all_reduce demo) on a background thread, with a SimControl the GUI steers and an
// event recorder the GUI copies from each frame. Restarting stops the run, keeps its loss
// curve for comparison, and starts a new one with new settings.
// Not a view: it knows nothing of ImGui; the GUI thread calls every member.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/events.h"
#include "gui/model/commands.h"
#include "gui/model/settings.h"
#include "gui/model/snapshot.h"
#include "sim/control.h"

namespace dsgd::gui {

// Keeps the events of a run with wall_s replaced by the network clock, which stops while
// paused and slows in slow motion, so packets drawn from it freeze when the user pauses.
// Thread-safe. Keeps the most recent `capacity` events (older ones are dropped in halves).
class EventRecorder : public EventSink {
 public:
  EventRecorder(sim::NetClock& clock, size_t capacity) : clock_(clock), capacity_(capacity) {}
  void on_event(const Event& event) override;
  // The last `count` events, oldest first.
  std::vector<Event> tail(size_t count) const;
  size_t total() const;  // events seen, dropped ones included
  // The snapshot of the newest `count` events. Its timeline starts where the run did
  // (network time 0); once the run has `ended`, its time stands at the last event.
  Snapshot snapshot(SnapshotInputs in, size_t count, bool ended) const;

 private:
  sim::NetClock& clock_;
  const size_t capacity_;
  mutable std::mutex mutex_;
  std::vector<Event> events_;
  size_t dropped_ = 0;
};

struct SessionLimits {
  size_t recorded_events = 400000;  // kept in memory per run
  size_t snapshot_events = 60000;   // the most recent ones each snapshot is built from
  size_t kept_curves = 4;           // earlier runs overlaid in the convergence view
};

class SimSession {
 public:
  explicit SimSession(SessionLimits limits = {});
  ~SimSession();
  SimSession(const SimSession&) = delete;
  SimSession& operator=(const SimSession&) = delete;

  // Stops the current run (if any), keeps its curve, and starts one with `settings`.
  // UsageError / DataError for settings that cannot run (bad model spec, dataset).
  void start(const SimSettings& settings);
  // Asks the run to end at its next step and waits for it.
  void stop();
  // Applies a simulation command (play, pause, set_speed, set_step_mode, step_message,
  // step_training, set_link, restart); returns false for commands that are not for the
  // session.
  bool apply(const Command& command);
  // Once per frame: delivers messages the user stepped, without blocking the frame.
  void poll();

  // What the views draw, from the run's recent events and state.
  Snapshot snapshot(const ViewSettings& view) const;
  const SimSettings& settings() const { return settings_; }
  int64_t step() const;  // training steps (or demo rounds) completed
  bool running() const;  // the run's thread has not finished
  std::string error() const;

 private:
  struct Run;
  // The running network's default link, from now on (the settings say so too).
  void set_link(const sim::LinkSpec& link);
  SessionLimits limits_;
  SimSettings settings_;
  std::unique_ptr<Run> run_;
  std::vector<Curve> history_;
  int pending_message_steps_ = 0;
};

// The network and node options a run of `settings` uses (exposed for tests).
sim::ClusterOptions cluster_options(const SimSettings& settings);
// The links of `settings` as the views show them: world * world, [src * world + dst].
std::vector<LinkView> link_views(const SimSettings& settings);
// What a run description tells the snapshot: world, algorithm, stragglers, crash steps.
SnapshotInputs snapshot_inputs(const sim::RunSpec& run);
// The same for a summarised trace of `run` (core/io/trace_summary.h): a lane per group of
// consecutive ranks, drawn with the link between the groups' first ranks, its ranks' slowest
// straggler factor and its earliest crash. Outages name ranks, not groups: left out.
SnapshotInputs grouped_snapshot_inputs(const sim::RunSpec& run, const TraceSummary& summary);

}  // namespace dsgd::gui
