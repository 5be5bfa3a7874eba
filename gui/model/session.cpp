// Sections: [recorder] [options] [run thread] [session].
#include "gui/model/session.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "core/comm/collectives.h"
#include "core/data/dataset.h"
#include "core/errors.h"
#include "core/io/trace_summary.h"
#include "core/train/train_inputs.h"
#include "core/train/trainer.h"
#include "gui/model/ui_text.h"
#include "sim/cluster.h"
#include "sim/link_rules.h"
#include "sim/network.h"

namespace dsgd::gui {

// ---------------------------------------------------------------------------------------
// [recorder]
// ---------------------------------------------------------------------------------------

void EventRecorder::on_event(const Event& event) {
  Event e = event;
  e.wall_s = clock_.now_s();
  std::lock_guard lock(mutex_);
  if (events_.size() >= capacity_) {  // drop the older half: amortised O(1) per event
    const size_t drop = events_.size() / 2;
    events_.erase(events_.begin(), events_.begin() + static_cast<std::ptrdiff_t>(drop));
    dropped_ += drop;
  }
  events_.push_back(e);
}

std::vector<Event> EventRecorder::tail(size_t count) const {
  std::lock_guard lock(mutex_);
  const size_t n = std::min(count, events_.size());
  return {events_.end() - static_cast<std::ptrdiff_t>(n), events_.end()};
}

size_t EventRecorder::total() const {
  std::lock_guard lock(mutex_);
  return dropped_ + events_.size();
}

Snapshot EventRecorder::snapshot(SnapshotInputs in, size_t count, bool ended) const {
  const std::vector<Event> events = tail(count);
  if (ended) in.now_s = -1;  // the last event's time: the clock runs on, the run does not
  Snapshot s = build_snapshot(events, in);
  if (!events.empty() && total() > events.size()) s.events_from_s = s.begin_s;
  s.begin_s = 0;
  return s;
}

// ---------------------------------------------------------------------------------------
// [options]
// ---------------------------------------------------------------------------------------

sim::ClusterOptions cluster_options(const SimSettings& s) {
  return s.run.cluster;
}

SnapshotInputs snapshot_inputs(const sim::RunSpec& run) {
  const int nodes = run.cluster.nodes;
  SnapshotInputs in{.world = nodes, .time_base = TimeBase::wall, .algorithm = run.allreduce};
  in.stragglers.assign(nodes, 1.0);
  in.crash_steps.assign(nodes, 0);
  in.crash_s.assign(nodes, 0.0);
  for (const auto& [rank, node] : run.cluster.node_overrides) {
    if (rank < 0 || rank >= nodes) continue;
    in.stragglers[rank] = node.straggler;
    in.crash_steps[rank] = node.crash_at_step.value_or(0);
    in.crash_s[rank] = node.crash_at_s.value_or(0.0);
  }
  in.outages = run.cluster.network.outages;
  in.rto_s = run.cluster.network.rto_s;
  return in;
}

// The links between `lanes` lanes, lane i standing for rank first(i).
template <typename First>
std::vector<LinkView> lane_links(const sim::ClusterOptions& o, int lanes, First first) {
  std::vector<LinkView> out(static_cast<size_t>(lanes) * lanes);
  for (int i = 0; i < lanes; ++i)
    for (int j = 0; j < lanes; ++j) {
      if (i == j) continue;
      const int a = first(i), b = first(j);
      // The rules every backend applies (a SimGrid topology's links are each --latency).
      const sim::LinkSpec l =
          sim::through_trunk(o.network, o.nodes, a, b, sim::overridden_link(o.network, a, b));
      out[i * lanes + j] = {.latency_s = l.latency_s, .bandwidth_Bps = l.bandwidth_Bps};
    }
  mark_slow_links(out);
  return out;
}

std::vector<LinkView> link_views(const SimSettings& settings) {
  return lane_links(settings.run.cluster, settings.run.cluster.nodes, [](int r) { return r; });
}

SnapshotInputs grouped_snapshot_inputs(const sim::RunSpec& run, const TraceSummary& summary) {
  const SnapshotInputs ranks = snapshot_inputs(run);
  const int groups = summary.groups;
  SnapshotInputs in{.world = groups, .algorithm = ranks.algorithm};
  in.stragglers.assign(groups, 1.0);
  in.crash_steps.assign(groups, 0);
  in.crash_s.assign(groups, 0.0);
  const auto earliest = [](auto group, auto rank) {
    return rank > 0 && (group == 0 || rank < group) ? rank : group;
  };
  for (int r = 0; r < ranks.world && r < summary.ranks; ++r) {
    const int g = summary_group(r, summary.ranks, groups);
    in.stragglers[g] = std::max(in.stragglers[g], ranks.stragglers[r]);
    in.crash_steps[g] = earliest(in.crash_steps[g], ranks.crash_steps[r]);
    in.crash_s[g] = earliest(in.crash_s[g], ranks.crash_s[r]);
  }
  in.rto_s = ranks.rto_s;
  in.links = lane_links(run.cluster, groups, [&](int g) {
    return std::min(summary_group_first(g, summary.ranks, groups), run.cluster.nodes - 1);
  });
  return in;
}

// ---------------------------------------------------------------------------------------
// [run thread]
// ---------------------------------------------------------------------------------------

namespace {
// Thrown on every rank at its next step boundary when the user stops or restarts the run.
struct StopRun : std::exception {
  const char* what() const noexcept override { return "stopped"; }
};
}  // namespace

struct SimSession::Run {
  Run(const SimSettings& s, size_t capacity) : settings(s), recorder(control.clock(), capacity) {}

  SimSettings settings;
  sim::SimControl control;
  EventRecorder recorder;
  std::vector<LinkView> links;
  std::atomic<bool> stop{false}, finished{false};
  std::atomic<int64_t> steps_done{0}, pause_after{0};
  std::atomic<int64_t> total_steps{0};  // known once the data are loaded
  mutable std::mutex mutex;             // curve, error
  Curve curve;
  std::string error;
  bool error_is_fault = false;  // a CommError or TimeoutError: the simulated faults' outcome
  std::thread thread;

  void body();
  void train_body(sim::ClusterOptions& options);
  void demo_body(sim::ClusterOptions& options);
};

void SimSession::Run::train_body(sim::ClusterOptions& options) {
  TrainInputs inputs =
      load_train_inputs(sim::train_config(settings.run), settings.run.data, settings.run.init);
  total_steps = dsgd::total_steps(inputs.config, inputs.data);
  // About 30 points on the curves, unless the flags asked for a schedule.
  if (inputs.config.eval_every == 0)
    inputs.config.eval_every = std::max<int64_t>(10, total_steps / 30);
  options.pairs = static_cast<int64_t>(
      training_pairs(inputs.config, inputs.data, settings.run.cluster.nodes).size());
  sim::run_cluster(options, [&](Communicator& comm) {
    TrainHooks hooks;
    hooks.on_step = [&](const StepMetrics& m) {
      if (comm.rank() == 0) {
        CurvePoint p{.step = m.step, .model_s = comm.model_s(), .wall_s = m.wall_s, .loss = m.loss};
        if (m.train_accuracy) p.train_accuracy = *m.train_accuracy;
        if (m.test_accuracy) p.test_accuracy = *m.test_accuracy;
        {
          std::lock_guard lock(mutex);
          curve.points.push_back(p);
        }
        steps_done = m.step;
        const int64_t target = pause_after.load();
        if (target > 0 && m.step >= target) {
          control.pause();
          pause_after = 0;
        }
      }
      if (stop) throw StopRun{};
    };
    run_training_on(comm, inputs, hooks);
  });
}

void SimSession::Run::demo_body(sim::ClusterOptions& options) {
  const int elements =
      settings.demo_elements > 0 ? settings.demo_elements : 2 * settings.run.cluster.nodes;
  sim::run_cluster(options, [&](Communicator& comm) {
    std::vector<float> data(elements);
    for (int64_t round = 0; round < settings.run.steps; ++round) {
      if (stop) throw StopRun{};
      for (int i = 0; i < elements; ++i)
        data[i] = demo_value(comm.rank(), i);
      all_reduce(comm, data, ReduceOp::SUM, {.algorithm = settings.run.allreduce});
      if (comm.rank() == 0) steps_done = round + 1;
      // Leave the averaged values on screen a moment before the next round starts over.
      for (int i = 0; i < 30 && !stop; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
}

void SimSession::Run::body() {
  try {
    sim::ClusterOptions options = cluster_options(settings);
    options.events = &recorder;
    options.control = &control;
    if (settings.mode == RunMode::train)
      train_body(options);
    else
      demo_body(options);
  } catch (const StopRun&) {
  } catch (const std::exception& e) {
    if (!stop) {
      std::lock_guard lock(mutex);
      error = e.what();
      const auto* failure = dynamic_cast<const Error*>(&e);
      error_is_fault = failure && failure->exit_code() == kExitComm;
    }
  }
  finished = true;
}

// ---------------------------------------------------------------------------------------
// [session]
// ---------------------------------------------------------------------------------------

SimSession::SimSession(SessionLimits limits) : limits_(limits) {}
SimSession::~SimSession() {
  stop();
}

void SimSession::start(const SimSettings& settings) {
  const int nodes = settings.run.cluster.nodes;
  if (nodes < 1 || nodes > sim::kMaxNodes)
    throw UsageError(fmt::format("nodes {}: choose 1 to {}", nodes, sim::kMaxNodes));
  stop();
  settings_ = settings;
  pending_message_steps_ = 0;
  run_ = std::make_unique<Run>(settings, limits_.recorded_events);
  run_->links = link_views(settings);
  run_->curve.label = describe(settings);
  run_->control.set_speed(std::clamp(settings.speed, 0.001, 1000.0));
  run_->control.set_step_mode(settings.step_mode);
  run_->thread = std::thread([run = run_.get()] { run->body(); });
}

void SimSession::stop() {
  if (!run_) return;
  run_->stop = true;
  run_->control.set_step_mode(false);
  run_->control.set_speed(1000);
  run_->control.resume();
  if (run_->thread.joinable()) run_->thread.join();
  {
    std::lock_guard lock(run_->mutex);
    if (!run_->curve.points.empty()) history_.push_back(std::move(run_->curve));
  }
  while (history_.size() > limits_.kept_curves)
    history_.erase(history_.begin());
  run_.reset();
}

bool SimSession::apply(const Command& c) {
  switch (c.kind) {
    case CommandKind::restart:
      start(c.settings);
      return true;
    default:
      break;
  }
  if (!run_) return c.kind <= CommandKind::restart;
  sim::SimControl& control = run_->control;
  switch (c.kind) {
    case CommandKind::play:
      control.set_step_mode(false);
      control.resume();
      settings_.step_mode = false;
      return true;
    case CommandKind::pause:
      control.pause();
      return true;
    case CommandKind::set_speed:
      settings_.speed = std::clamp(c.value, 0.001, 1000.0);
      control.set_speed(settings_.speed);
      return true;
    case CommandKind::set_step_mode:
      settings_.step_mode = c.flag;
      control.set_step_mode(c.flag);
      if (c.flag) control.resume();  // step mode holds messages and the clock by itself
      return true;
    case CommandKind::step_message:
      if (!control.step_mode()) {
        control.set_step_mode(true);
        settings_.step_mode = true;
        control.resume();
      }
      ++pending_message_steps_;
      return true;
    case CommandKind::set_link:
      set_link(c.settings.run.cluster.network.link);
      return true;
    case CommandKind::step_training:
      control.set_step_mode(false);
      settings_.step_mode = false;
      run_->pause_after = run_->steps_done + 1;
      control.resume();
      return true;
    default:
      return false;
  }
}

void SimSession::set_link(const sim::LinkSpec& link) {
  settings_.run.cluster.network.link = link;
  run_->links = link_views(settings_);
  run_->control.set_link(link);
}

void SimSession::poll() {
  if (!run_ || pending_message_steps_ == 0) return;
  if (run_->finished) {
    pending_message_steps_ = 0;
    return;
  }
  // A short wait: the step happens once every node is blocked; if not yet, next frame.
  if (run_->control.step(std::chrono::milliseconds(2))) --pending_message_steps_;
}

int64_t SimSession::step() const {
  return run_ ? run_->steps_done.load() : 0;
}
bool SimSession::running() const {
  return run_ && !run_->finished;
}
std::string SimSession::error() const {
  if (!run_) return {};
  std::lock_guard lock(run_->mutex);
  return run_->error;
}

Snapshot SimSession::snapshot(const ViewSettings& view) const {
  if (!run_) {
    Snapshot s;
    s.view = view;
    s.curves = history_;
    s.controls.settings = settings_;
    s.controls.status = "not started";
    return s;
  }
  const SimSettings& set = run_->settings;
  SnapshotInputs in = snapshot_inputs(set.run);
  in.now_s = run_->control.clock().now_s();
  in.links = run_->links;
  in.complete = run_->finished;
  if (set.mode == RunMode::allreduce_demo)
    in.demo_elements = set.demo_elements > 0 ? set.demo_elements : 2 * set.run.cluster.nodes;
  Snapshot s = run_->recorder.snapshot(in, limits_.snapshot_events, run_->finished);
  s.view = view;
  s.curves = history_;
  {
    std::lock_guard lock(run_->mutex);
    s.curves.push_back(run_->curve);
    s.error = run_->error;
    s.error_is_fault = run_->error_is_fault;
  }
  ControlState& c = s.controls;
  c.live = true;
  c.running = !run_->finished;
  c.paused = run_->control.clock().paused();
  c.step_mode = run_->control.step_mode();
  c.speed = run_->control.clock().speed();
  c.step = run_->steps_done;
  c.total_steps = set.mode == RunMode::train ? run_->total_steps.load() : set.run.steps;
  c.settings = settings_;
  c.status = s.error_is_fault   ? "ended by a fault"
             : !s.error.empty() ? "failed"
             : run_->finished   ? "finished"
             : c.paused         ? "paused"
             : c.step_mode      ? "step mode"
                                : "running";
  s.title = fmt::format("{} - {}", tr(to_string(set.mode)), describe(settings_));
  s.network = network_caption(settings_.run.cluster);
  return s;
}

}  // namespace dsgd::gui
