// Elastic membership of simulated nodes: when a node dies (a --crash fault), the others go
// on, under one of the two policies users of PyTorch and Horovod know.
//   restart     torchrun's elastic agent: the survivors stop, and the run starts again from
//               the newest checkpoint with the new world size; the steps since that
//               checkpoint are lost. At most max_restarts times (torchrun's --max-restarts).
//   in-process  Horovod elastic's hvd.elastic.run: the survivors agree on the new
//               membership, keep the state each committed after its last step
//               (state.commit()), take the new rank 0's (state.sync()), and continue.
// Either way the survivors are renumbered 0..N'-1 in their old order and each global batch
// of B samples is split over the N' ranks (the data are re-sharded, B stays).
// Mechanism, the same for both: a round runs the cluster of the current members; a crash
// fault ends it, and the next round's cluster is the survivors, with their own faults and
// link overrides, whose events name the first round's ranks (the nodes) and whose wall and
// model clocks go on from the last round's. Not a trainer: the round function trains.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/train/trainer.h"
#include "sim/cluster.h"

namespace dsgd::sim {

enum class ElasticPolicy { none, restart, in_process };
const char* to_string(ElasticPolicy policy);  // "none", "restart", "in-process"
// UsageError for anything but the three names.
ElasticPolicy parse_elastic_policy(const std::string& text);

struct ElasticSpec {
  ElasticPolicy policy = ElasticPolicy::none;
  int max_restarts = 3;  // membership changes a run may go through
};

// One change of membership, in nodes (the first round's ranks).
struct MembershipChange {
  std::vector<int> lost;     // whose crash fault fired (processes: whose process ended)
  std::vector<int> joined;   // nodes that joined (dsgd node --join), numbered from the first world
  std::vector<int> members;  // the nodes after the change, in their new ranks' order
  int world = 0;             // ranks after the change
  int64_t reached_step = 0;  // the most steps a survivor had finished when it happened
  int64_t resumed_step = 0;  // where the survivors went on from
};

// What one round gives each of its ranks. The callbacks are called on the ranks' threads.
struct ElasticRound {
  int round = 0;
  std::vector<int> members;            // the node of each rank
  const TrainState* resume = nullptr;  // where the round starts (null: the run's start)
  double model_start_s = 0;            // the model time it starts at
  double wall_start_s = 0;             // and the seconds since the first round started
  // Processes (node_process.h): only rank 0 holds `resume`; every rank calls share_state
  // (core/train/state_share.h) first when this is set.
  bool shares_state = false;
  // After each step: how far the rank got. In-process: with the state it commits.
  std::function<void(int rank, int64_t step, double model_s)> step_done;
  std::function<void(int rank, const TrainState& state)> commit;  // in-process only
};
using RoundFunction = std::function<void(Communicator&, const ElasticRound&)>;
// Restart: the state of the newest checkpoint (none: start afresh).
using CheckpointSource = std::function<std::optional<TrainState>()>;

// How a round ended, by its ranks.
struct RoundOutcome {
  std::vector<bool> lost;        // its crash fault fired, or its process ended
  std::vector<int64_t> reached;  // the steps each had finished
  double model_s = 0;            // the most model time a rank reached
  std::string failure;           // the error a survivor saw, with the nodes' numbers ("": none)
  int failure_peer = -1;         // the node it names
  bool any_lost() const;
};

// The change a round of `members` (nodes, by rank) makes when it lost ranks, resumed_step
// aside. CommError when every node is lost, or when `changes_so_far` is spec.max_restarts
// (naming the rank, and the nodes' numbering when ranks were renumbered).
MembershipChange membership_change(const RoundOutcome& outcome, const std::vector<int>& members,
                                   size_t changes_so_far, const ElasticSpec& spec);

// Passes a round's events on with the nodes' numbers (rank and peer), and the round in the
// seq of its message events (kRoundShift, events.h), so that a trace shows one lane per node
// across the rounds and pairs each round's messages among themselves.
class NodeNumbering : public EventSink {
 public:
  NodeNumbering(EventSink* next, const std::vector<int>& members, int round)
      : next_(next), members_(members), round_(round) {}
  void on_event(const Event& event) override;

 private:
  EventSink* next_;
  const std::vector<int>& members_;
  int round_;
};

// Marks where each of `nodes`' round ended, in the events: what it left open (a step, a
// compute, a collective) ends there, unfinished, a receive it never completed is dropped,
// and a later round's step of the same number is a step of its own (core/event_fold.h).
// The note's seq is the round's number: a message of it folded after its receiver's note
// (a watched run's events come as each process sends them) was abandoned too.
void end_round_in_events(EventSink* events, const std::vector<int>& nodes, Clock::time_point epoch,
                         double model_s, int round);

// Adds a round's reports to a rank's hooks: after `hooks.on_step`, round.step_done; and, in
// process, round.commit of every step's state.
void add_round_hooks(TrainHooks& hooks, const Communicator& comm, const ElasticRound& round);

// Runs a round's ranks: `round` is the cluster of `members` (the first round's nodes, by
// rank). Simulated nodes: run_cluster; SimGrid: rounds of one simulation (sg_cluster.h).
struct RoundRunner {
  std::function<void(const ClusterOptions& round, const std::vector<int>& members,
                     const NodeFunction& fn)>
      run;
  // The ranks' clock goes on across rounds (SimGrid's virtual time): fault and outage times
  // stay as given, where simulated nodes count them from each round's start.
  bool one_clock = false;
};

// Runs rounds of `options`' cluster until one ends without a crash, and returns the
// membership changes. A failure that no crash fault caused, a change past max_restarts or
// the loss of every node ends the run with the round's error (CommError naming the rank).
// `runner` runs each round (empty: on simulated nodes).
std::vector<MembershipChange> run_elastic(const ClusterOptions& options, const ElasticSpec& spec,
                                          const RoundFunction& fn,
                                          const CheckpointSource& newest_checkpoint,
                                          const RoundRunner& runner = {});

// The cluster of `members` (nodes of `first`, in order): their faults, and the link
// overrides and outages between two of them, renumbered; times of faults and outages
// counted from `elapsed_s` into the run.
ClusterOptions survivors_cluster(const ClusterOptions& first, const std::vector<int>& members,
                                 double elapsed_s);

// An elastic run's result is its last round's rank 0's: `steps` (rank 0's over every round)
// give it the compute and communication time, traffic and steps of them all.
void count_every_round(TrainResult& result, std::span<const StepMetrics> steps);

// "rank 1 lost after step 19: 3 ranks went on from step 16, 3 steps lost (restart)", one
// line per change.
std::vector<std::string> describe_changes(const std::vector<MembershipChange>& changes,
                                          ElasticPolicy policy);

}  // namespace dsgd::sim
