#include "sim/elastic.h"

#include <algorithm>
#include <atomic>
#include <mutex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/errors.h"

namespace dsgd::sim {

const char* to_string(ElasticPolicy policy) {
  switch (policy) {
    case ElasticPolicy::restart:
      return "restart";
    case ElasticPolicy::in_process:
      return "in-process";
    case ElasticPolicy::none:
      break;
  }
  return "none";
}

ElasticPolicy parse_elastic_policy(const std::string& text) {
  for (ElasticPolicy p : {ElasticPolicy::none, ElasticPolicy::restart, ElasticPolicy::in_process})
    if (text == to_string(p)) return p;
  throw UsageError(fmt::format(
      "--elastic {}: use restart (torchrun's: start again from the newest checkpoint) or "
      "in-process (Horovod's: the survivors keep their state and go on)",
      text));
}

namespace {

// The round's index of `node`, or -1 when it is not a member.
int index_of(const std::vector<int>& members, int node) {
  const auto it = std::find(members.begin(), members.end(), node);
  return it == members.end() ? -1 : static_cast<int>(it - members.begin());
}

// A link end: -1 ("any") stays; a node maps to its index, or to nothing when it is gone.
std::optional<int> link_end(const std::vector<int>& members, int node) {
  if (node < 0) return node;
  const int i = index_of(members, node);
  return i < 0 ? std::nullopt : std::optional<int>(i);
}

// A fault or outage time, counted from the round's start.
double shifted(double t, double elapsed_s) {
  return t >= 1e299 ? t : t - elapsed_s;
}

// What the ranks of one round report, which crashed (any thread), and how it failed.
class RoundRecord {
 public:
  explicit RoundRecord(size_t world) : reached_(world, 0), committed_(world) {}
  void crashed(int rank) {
    std::lock_guard lock(mutex_);
    crashed_.push_back(rank);
  }
  void step_done(int rank, int64_t step, double model_s) {
    std::lock_guard lock(mutex_);
    reached_[static_cast<size_t>(rank)] = step;
    model_s_ = std::max(model_s_, model_s);
  }
  void commit(int rank, const TrainState& state) {
    std::lock_guard lock(mutex_);
    committed_[static_cast<size_t>(rank)] = state;
  }
  // After the round (its threads are done): no lock needed.
  bool any_lost() const { return !crashed_.empty(); }
  RoundOutcome outcome() const {
    RoundOutcome o{
        .reached = reached_, .model_s = model_s_, .failure = failure, .failure_peer = failure_peer};
    o.lost.assign(reached_.size(), false);
    for (int rank : crashed_)
      o.lost[static_cast<size_t>(rank)] = true;
    return o;
  }
  const std::optional<TrainState>& committed(int rank) const {
    return committed_[static_cast<size_t>(rank)];
  }
  std::string failure;  // the round's error, with the nodes' numbers; "" when none was seen
  int failure_peer = -1;

 private:
  std::mutex mutex_;
  std::vector<int> crashed_;
  std::vector<int64_t> reached_;
  double model_s_ = 0;
  std::vector<std::optional<TrainState>> committed_;
};

}  // namespace

void NodeNumbering::on_event(const Event& event) {
  Event e = event;
  if (e.rank >= 0 && e.rank < static_cast<int>(members_.size())) e.rank = members_[e.rank];
  if (e.peer >= 0 && e.peer < static_cast<int>(members_.size())) e.peer = members_[e.peer];
  if (e.kind == EventKind::send_begin || e.kind == EventKind::send_end ||
      e.kind == EventKind::recv_begin || e.kind == EventKind::recv_end)
    e.seq += static_cast<uint64_t>(round_) << kRoundShift;
  next_->on_event(e);
}

bool RoundOutcome::any_lost() const {
  return std::find(lost.begin(), lost.end(), true) != lost.end();
}

ClusterOptions survivors_cluster(const ClusterOptions& first, const std::vector<int>& members,
                                 double elapsed_s) {
  ClusterOptions c = first;
  c.nodes = static_cast<int>(members.size());
  c.node_overrides.clear();
  for (const auto& [node, options] : first.node_overrides) {
    const int i = index_of(members, node);
    if (i < 0) continue;
    NodeOptions o = options;
    if (o.crash_at_s) o.crash_at_s = shifted(*o.crash_at_s, elapsed_s);
    c.node_overrides[i] = o;
  }
  c.network.overrides.clear();
  for (LinkOverride o : first.network.overrides) {
    const std::optional<int> from = link_end(members, o.from), to = link_end(members, o.to);
    if (!from || !to) continue;
    o.from = *from, o.to = *to;
    c.network.overrides.push_back(o);
  }
  c.network.outages.clear();
  for (Outage o : first.network.outages) {
    std::vector<std::pair<int, int>> links;
    for (auto [a, b] : o.links) {
      const int i = index_of(members, a), j = index_of(members, b);
      if (i >= 0 && j >= 0) links.emplace_back(i, j);
    }
    if (links.empty()) continue;
    c.network.outages.push_back({.links = links,
                                 .from_s = shifted(o.from_s, elapsed_s),
                                 .until_s = shifted(o.until_s, elapsed_s)});
  }
  return c;
}

namespace {

// How the ranks a round's errors name were numbered at the start, or "" when they were not
// renumbered: "; ranks 0, 1, 2 here were 0, 2, 3 at the start".
std::string renumbering(const std::vector<int>& members) {
  for (size_t i = 0; i < members.size(); ++i)
    if (members[i] != static_cast<int>(i)) {
      std::vector<size_t> ranks(members.size());
      for (size_t r = 0; r < ranks.size(); ++r)
        ranks[r] = r;
      return fmt::format("; ranks {} here were {} at the start", fmt::join(ranks, ", "),
                         fmt::join(members, ", "));
    }
  return "";
}

// Runs one round; returns whether a crash fault fired in it. Rethrows any failure no crash
// caused; keeps the one a crash did in the record.
bool run_round(const ClusterOptions& options, const RoundFunction& fn, const ElasticRound& round,
               RoundRecord& record, const RoundRunner& runner) {
  try {
    const NodeFunction rank = [&](Communicator& comm) {
      comm.advance_model_to(round.model_start_s);
      fn(comm, round);
    };
    if (runner.run)
      runner.run(options, round.members, rank);
    else
      run_cluster(options, rank);
  } catch (const CommError& e) {
    if (!record.any_lost()) throw;
    record.failure = e.what();
    record.failure_peer = e.peer() >= 0 && e.peer() < options.nodes
                              ? round.members[static_cast<size_t>(e.peer())]
                              : e.peer();
  }
  return record.any_lost();
}

// The error that ends a run whose round lost `change.lost` with no change left to make.
CommError out_of_changes(const RoundOutcome& outcome, const MembershipChange& change,
                         const std::vector<int>& members, size_t changes_so_far,
                         const ElasticSpec& spec) {
  const std::string failure =
      outcome.failure.empty()  // every rank finished or crashed: none saw the loss
          ? fmt::format("rank {} crashed (a --crash fault)", change.lost.front())
          : outcome.failure;
  return CommError(
      fmt::format("{} (after {} membership {}, the most --max-restarts {} allows: raise it to go "
                  "on{})",
                  failure, changes_so_far, changes_so_far == 1 ? "change" : "changes",
                  spec.max_restarts, renumbering(members)),
      outcome.failure.empty() ? change.lost.front() : outcome.failure_peer);
}

}  // namespace

void end_round_in_events(EventSink* events, const std::vector<int>& nodes, Clock::time_point epoch,
                         double model_s, int round) {
  if (!events) return;
  const double wall_s = std::chrono::duration<double>(Clock::now() - epoch).count();
  for (int node : nodes)
    events->on_event({.kind = EventKind::note,
                      .rank = node,
                      .seq = static_cast<uint64_t>(round),
                      .wall_s = wall_s,
                      .model_s = model_s,
                      .op = kRoundEndNote});
}

MembershipChange membership_change(const RoundOutcome& outcome, const std::vector<int>& members,
                                   size_t changes_so_far, const ElasticSpec& spec) {
  MembershipChange change;
  for (size_t rank = 0; rank < members.size(); ++rank) {
    if (outcome.lost[rank]) {
      change.lost.push_back(members[rank]);
      continue;
    }
    change.members.push_back(members[rank]);
    change.reached_step = std::max(change.reached_step, outcome.reached[rank]);
  }
  if (change.members.empty())
    throw CommError(fmt::format("every node crashed (the last {} {}); nothing is left to go on "
                                "with",
                                change.lost.size() == 1 ? "was rank" : "were ranks",
                                fmt::join(change.lost, ", ")),
                    change.lost.front());
  if (changes_so_far >= static_cast<size_t>(spec.max_restarts))
    throw out_of_changes(outcome, change, members, changes_so_far, spec);
  change.world = static_cast<int>(change.members.size());
  return change;
}

namespace {

// The state the survivors go on from, after a round in which some died.
std::optional<TrainState> state_to_go_on(const ElasticSpec& spec, const RoundRecord& record,
                                         const RoundOutcome& outcome,
                                         const std::optional<TrainState>& before,
                                         const CheckpointSource& newest_checkpoint) {
  if (spec.policy == ElasticPolicy::restart) return newest_checkpoint();
  // Horovod's state.sync(): the new rank 0 (the lowest surviving rank) gives its commit.
  const size_t first = static_cast<size_t>(
      std::find(outcome.lost.begin(), outcome.lost.end(), false) - outcome.lost.begin());
  const std::optional<TrainState>& commit = record.committed(static_cast<int>(first));
  return commit ? commit : before;
}

}  // namespace

std::vector<MembershipChange> run_elastic(const ClusterOptions& options, const ElasticSpec& spec,
                                          const RoundFunction& fn,
                                          const CheckpointSource& newest_checkpoint,
                                          const RoundRunner& runner) {
  std::vector<MembershipChange> changes;
  std::vector<int> members(static_cast<size_t>(options.nodes));
  for (int r = 0; r < options.nodes; ++r)
    members[static_cast<size_t>(r)] = r;
  const Clock::time_point epoch = options.epoch.value_or(Clock::now());
  std::optional<TrainState> resume;
  double model_start_s = 0;
  for (int round = 0;; ++round) {
    const double elapsed_s = std::chrono::duration<double>(Clock::now() - epoch).count();
    ClusterOptions o = survivors_cluster(options, members, runner.one_clock ? 0 : elapsed_s);
    RoundRecord record(members.size());
    NodeNumbering numbering(options.events, members, round);
    o.epoch = epoch;
    o.events = options.events ? &numbering : nullptr;
    o.on_crash = [&record](int rank) { record.crashed(rank); };
    ElasticRound r{.round = round,
                   .members = members,
                   .resume = resume ? &*resume : nullptr,
                   .model_start_s = model_start_s,
                   .wall_start_s = elapsed_s};
    r.step_done = [&record](int rank, int64_t step, double model_s) {
      record.step_done(rank, step, model_s);
    };
    if (spec.policy == ElasticPolicy::in_process)
      r.commit = [&record](int rank, const TrainState& s) { record.commit(rank, s); };
    if (!run_round(o, fn, r, record, runner)) return changes;
    const RoundOutcome outcome = record.outcome();
    end_round_in_events(options.events, members, epoch, outcome.model_s, round);
    MembershipChange change = membership_change(outcome, members, changes.size(), spec);
    resume = state_to_go_on(spec, record, outcome, resume, newest_checkpoint);
    change.resumed_step = resume ? resume->step : 0;
    changes.push_back(change);
    members = change.members;
    model_start_s = std::max(model_start_s, outcome.model_s);
  }
}

void add_round_hooks(TrainHooks& hooks, const Communicator& comm, const ElasticRound& round) {
  hooks.on_step = [&comm, &round, on_step = std::move(hooks.on_step)](const StepMetrics& m) {
    if (on_step) on_step(m);
    round.step_done(comm.rank(), m.step, m.model_s);
  };
  if (round.commit)
    hooks.on_commit = [&comm, &round](const TrainState& s) { round.commit(comm.rank(), s); };
}

void count_every_round(TrainResult& result, std::span<const StepMetrics> steps) {
  TrainResult all;
  for (const StepMetrics& m : steps)
    add_step(all, m);
  result.compute_s = all.compute_s, result.comm_s = all.comm_s;
  result.bytes_sent = all.bytes_sent, result.steps_run = all.steps_run;
}

namespace {

// "rank 1 lost", "ranks 3, 4 joined", "rank 1 lost, rank 3 joined".
std::string who_changed(const MembershipChange& c) {
  std::vector<std::string> parts;
  auto part = [&](const std::vector<int>& nodes, const char* what) {
    if (!nodes.empty())
      parts.push_back(fmt::format("{} {} {}", nodes.size() == 1 ? "rank" : "ranks",
                                  fmt::join(nodes, ", "), what));
  };
  part(c.lost, "lost");
  part(c.joined, "joined");
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

std::vector<std::string> describe_changes(const std::vector<MembershipChange>& changes,
                                          ElasticPolicy policy) {
  std::vector<std::string> lines;
  for (const MembershipChange& c : changes) {
    const int64_t lost_steps = c.reached_step - c.resumed_step;
    lines.push_back(fmt::format(
        "{} after step {}: {} {} went on from step {}{} ({})", who_changed(c), c.reached_step,
        c.world, c.world == 1 ? "rank" : "ranks", c.resumed_step,
        lost_steps > 0 ? fmt::format(", {} {} lost", lost_steps, lost_steps == 1 ? "step" : "steps")
                       : "",
        to_string(policy)));
  }
  return lines;
}

}  // namespace dsgd::sim
