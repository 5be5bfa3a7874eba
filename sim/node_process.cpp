#include "sim/node_process.h"

#include <chrono>
#include <optional>

#include <fmt/format.h>

#include "core/errors.h"
#include "sim/node_setup.h"
#include "sim/rendezvous.h"

namespace dsgd::sim {
namespace {

using boost::asio::ip::tcp;

// The rendezvous, in its two halves: first the run's epoch (rank 0 opens the rendezvous and
// picks it; the others join and learn it, and whether they share rank 0's machine), then,
// once this node listens, every rank's address. An elastic run keeps it for later rounds.
class Rendezvous {
 public:
  // `since`: when the wait began (deadline = since + the timeout).
  Rendezvous(const NodeProcessOptions& p, int world, Clock::time_point since,
             Clock::time_point deadline, bool elastic)
      : p_(p), since_(since), deadline_(deadline), elastic_(elastic) {
    if (p.rank == 0) {
      // Rank 0 accepts on the listen address (loopback by default) at the rendezvous port.
      server_.emplace(tcp::endpoint(p.listen, p.rendezvous.port()), world, p.token, p.run_hash,
                      p.on_refusal);
      epoch_ns_ = server_->epoch_ns();
      return;
    }
    client_.emplace(p.rendezvous, p.rank, world, p.token, p.run_hash);
    const Hello rank0 = client_->join(deadline);
    epoch_ns_ = rank0.epoch_ns;
    same_host_as_rank0_ = rank0.host_id != 0 && rank0.host_id == host_id();
  }

  int64_t epoch_ns() const { return epoch_ns_; }
  bool same_host_as_rank0() const { return same_host_as_rank0_; }
  RendezvousServer* server() { return server_ ? &*server_ : nullptr; }
  RendezvousClient* client() { return client_ ? &*client_ : nullptr; }

  // The table of every rank's address; this node accepts peers on `port`.
  RendezvousTable finish(uint16_t port) {
    if (server_) {
      RendezvousTable table = server_->serve(own_address(port), deadline_, since_);
      if (!elastic_) server_.reset();  // the rendezvous port is free again
      return table;
    }
    // A little longer than rank 0 waits, so that its word on who is missing arrives first.
    RendezvousTable table = client_->finish(port, deadline_ + std::chrono::seconds(2));
    if (!elastic_) client_.reset();
    return table;
  }

  // Others reach rank 0 where they reached the rendezvous, unless it listens on one address.
  PeerAddress own_address(uint16_t port) const {
    return {.host = p_.listen.is_unspecified() ? p_.rendezvous.address().to_string()
                                               : p_.listen.to_string(),
            .port = port};
  }

 private:
  const NodeProcessOptions& p_;
  const Clock::time_point since_, deadline_;
  const bool elastic_;
  std::optional<RendezvousServer> server_;
  std::optional<RendezvousClient> client_;
  int64_t epoch_ns_ = 0;
  bool same_host_as_rank0_ = true;
};

// One round's node of this process: its network clock, its links and the node itself,
// listening on a port of its own. A control (ClusterOptions::control) steers it with its
// own clock, which counts link delays from each message's arrival as across machines.
class RoundNode {
 public:
  // `job_epoch`: the run's time 0 on this machine (job_epoch(), once per run).
  RoundNode(const NodeProcessOptions& p, const ClusterOptions& options, int rank,
            const Rendezvous& rendezvous, Clock::time_point job_epoch)
      : p_(p), control_(options.control), network_(options.network, options.nodes) {
    if (control_)
      clock_ = &control_->clock();
    else if (rendezvous.same_host_as_rank0() && p.clock != ClockChoice::local)
      clock_ = &own_clock_.emplace(job_epoch);  // one CLOCK_MONOTONIC: network times agree
    else
      clock_ = &own_clock_.emplace();  // this machine's own; frames carry delays, not times
    const NodeJob job{
        .job = {.token = p.token, .epoch_ns = rendezvous.epoch_ns(), .run_hash = p.run_hash},
        .epoch = job_epoch};
    node_ = make_node(options, rank, network_, *clock_, job, nullptr, p.listen.to_string());
    if (control_) control_->attach({node_.get()}, &network_);  // gated before a frame comes
  }
  ~RoundNode() {
    if (control_) control_->detach();
  }
  RoundNode(const RoundNode&) = delete;
  RoundNode& operator=(const RoundNode&) = delete;
  uint16_t port() const { return node_->port(); }
  SimNode& node() { return *node_; }

  // Runs `fn` once the table is known; false when a crash fault fired.
  bool run(const RendezvousTable& table, const NodeFunction& fn,
           std::chrono::milliseconds timeout) {
    if (p_.clock == ClockChoice::shared && !table.one_host)
      throw UsageError(
          "--clock shared: the ranks run on several machines, whose clocks differ; "
          "use --clock auto");
    node_->set_shared_clock(!control_ && (p_.clock == ClockChoice::shared ||
                                          (p_.clock == ClockChoice::automatic && table.one_host)));
    node_->set_peer_addresses(table.peers);
    node_->start();
    try {
      if (!run_node_function(*node_, fn, timeout)) return false;
    } catch (const CommError& e) {
      try {
        node_->leave(e.what());  // the peers that wait for this node hear why
      } catch (...) {
        // Best effort: the run's own error is the one to report.
      }
      throw;
    }
    node_->close();
    return true;
  }

 private:
  const NodeProcessOptions& p_;
  SimControl* control_;
  Network network_;
  std::optional<NetClock> own_clock_;
  NetClock* clock_ = nullptr;
  std::unique_ptr<SimNode> node_;
};

// The run's time 0 on this machine: rank 0's epoch when the steady clock is shared with it,
// otherwise now.
Clock::time_point job_epoch(const Rendezvous& rendezvous) {
  if (!rendezvous.same_host_as_rank0()) return Clock::now();
  return Clock::time_point{
      std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(rendezvous.epoch_ns()))};
}

CommError crashed(int rank) {
  return CommError(fmt::format("rank {} crashed (a --crash fault)", rank), rank);
}

// The rounds of an elastic run in this process (run_elastic_node_process): this node's
// part of each, then rank 0 decides what comes next from every rank's report and the
// others wait for its word.
class ElasticRounds {
 public:
  ElasticRounds(const NodeProcessOptions& p, const ClusterOptions& options, const ElasticSpec& spec,
                const RoundFunction& fn, const CheckpointSource& newest_checkpoint)
      : p_(p),
        options_(options),
        spec_(spec),
        fn_(fn),
        newest_checkpoint_(newest_checkpoint),
        since_(Clock::now()),
        rendezvous_(p, options.nodes, since_, since_ + options.timeout, true),
        epoch_(job_epoch(rendezvous_)),
        rank_(p.rank) {
    next_node_ = options.nodes;
    if (p.rank == kJoinRank) {  // a node that joins: rank 0 says when, and as which rank
      using namespace std::chrono_literals;
      next(rendezvous_.client()->await_round(since_ + 2 * options.timeout + 5s), 0, false);
      if (p.on_joined) p.on_joined(node_id(), rank_, static_cast<int>(round_.members.size()));
      return;
    }
    for (int r = 0; r < options.nodes; ++r)
      round_.members.push_back(r);
  }

  std::vector<MembershipChange> run() {
    while (true) {
      const OwnRound own = run_round();
      if (!(rank_ == 0 ? decide(own) : await_next(own.report))) return changes_;
    }
  }

 private:
  struct OwnRound {
    RoundReport report;
    std::optional<TrainState> commit;  // in-process: the last state it committed
    int64_t steps = 0;                 // the steps it finished in the round
    bool ended_for_joiners = false;    // rank 0 ended the round to let nodes join
  };
  struct EndForJoiners {};  // thrown on rank 0's thread as a step begins

  // This node's part of the round. A crash fault ends the process (CommError naming it):
  // rank 0 sees its connection close.
  OwnRound run_round() {
    const double elapsed_s = std::chrono::duration<double>(Clock::now() - since_).count();
    ClusterOptions o = survivors_cluster(options_, round_.members, elapsed_s);
    NodeNumbering numbering(options_.events, round_.members, round_.round);
    o.events = options_.events ? &numbering : nullptr;
    OwnRound own;
    ElasticRound r = round_;
    r.resume = resume_ ? &*resume_ : nullptr;
    r.wall_start_s = elapsed_s;
    r.step_done = [&own](int, int64_t step, double model_s) {
      own.report.reached_step = step, own.report.model_s = model_s;
      ++own.steps;
    };
    if (spec_.policy == ElasticPolicy::in_process)
      r.commit = [&own](int, const TrainState& state) { own.commit = state; };
    RoundNode node(p_, o, rank_, rendezvous_, epoch_);
    if (round_.round == 0 && p_.on_listening) p_.on_listening(node.port());
    const RendezvousTable table = table_for(node.port());
    if (rank_ == 0) end_for_joiners(node.node(), own);
    bool alive = true;
    try {
      alive = node.run(
          table,
          [&](Communicator& comm) {
            comm.advance_model_to(r.model_start_s);
            fn_(comm, r);
          },
          o.timeout);
      own.report.finished = alive;
    } catch (const CommError& e) {
      own.report.failure = e.what(), own.report.failure_peer = e.peer();
    } catch (const EndForJoiners&) {
      own.ended_for_joiners = true;
    }
    if (!alive) throw crashed(node_id());
    return own;
  }

  // Rank 0: as a step begins, once the round has made progress, nodes waiting to join end
  // it (after the last step's commit and checkpoint); the others then find rank 0 gone.
  void end_for_joiners(SimNode& node, const OwnRound& own) {
    node.set_step_check([this, &own](int64_t) {
      if (own.steps > 0 && rendezvous_.server()->poll_joiners() > 0) throw EndForJoiners{};
    });
  }

  int node_id() const { return round_.members[static_cast<size_t>(rank_)]; }

  RendezvousTable table_for(uint16_t port) {
    using namespace std::chrono_literals;
    if (round_.round == 0) {
      RendezvousTable table = rendezvous_.finish(port);
      if (rank_ == 0) rendezvous_.server()->admit_joiners();
      return table;
    }
    const Clock::time_point deadline = Clock::now() + options_.timeout;
    if (rank_ == 0)
      return rendezvous_.server()->next_round(survivor_ranks_, round_start_,
                                              rendezvous_.own_address(port), deadline);
    return rendezvous_.client()->finish(port, deadline + 2s);
  }

  // Rank 0: every rank's report; false when the run is over, CommError when it fails.
  bool decide(const OwnRound& own) {
    using namespace std::chrono_literals;
    RendezvousServer& server = *rendezvous_.server();
    std::vector<std::optional<RoundReport>> reports =
        server.collect_reports(Clock::now() + options_.timeout + 2s);
    reports[0] = own.report;
    const RoundOutcome outcome = outcome_of(reports);
    const Clock::time_point tell_by = Clock::now() + kHelloTimeout;
    if (!outcome.any_lost() && !own.ended_for_joiners) {
      server.end_rounds(outcome.failure, outcome.failure_peer, tell_by);
      if (outcome.failure.empty()) return false;
      throw CommError(outcome.failure, outcome.failure_peer);
    }
    MembershipChange change;
    try {
      change = outcome.any_lost()
                   ? membership_change(outcome, round_.members, changes_.size(), spec_)
                   : unchanged(outcome);
    } catch (const CommError& e) {
      server.end_rounds(e.what(), e.peer(), tell_by);
      throw;
    }
    add_joiners(change, server.poll_joiners());
    if (spec_.policy == ElasticPolicy::restart)
      resume_ = newest_checkpoint_();
    else if (own.commit)
      resume_ = own.commit;
    change.resumed_step = resume_ ? resume_->step : 0;
    if (!change.lost.empty() || !change.joined.empty()) changes_.push_back(change);
    survivor_ranks_.clear();
    for (size_t rank = 0; rank < outcome.lost.size(); ++rank)
      if (!outcome.lost[rank]) survivor_ranks_.push_back(static_cast<int>(rank));
    next({.round = round_.round + 1,
          .nodes = change.members,
          .model_start_s = std::max(round_.model_start_s, outcome.model_s),
          .shares_state = resume_.has_value()},
         outcome.model_s);
    return true;
  }

  // A round ended for joiners and lost no one: every member goes on.
  MembershipChange unchanged(const RoundOutcome& outcome) const {
    MembershipChange change{.members = round_.members};
    for (int64_t reached : outcome.reached)
      change.reached_step = std::max(change.reached_step, reached);
    return change;
  }

  // The nodes waiting to join (as many as fit kMaxNodes) become the last ranks, numbered
  // after every node so far.
  void add_joiners(MembershipChange& change, size_t waiting) {
    const size_t room = static_cast<size_t>(kMaxNodes) - change.members.size();
    for (size_t i = 0; i < std::min(waiting, room); ++i) {
      change.joined.push_back(next_node_);
      change.members.push_back(next_node_++);
    }
    change.world = static_cast<int>(change.members.size());
  }

  // The round's outcome from every rank's report (none: lost), in the nodes' numbers.
  RoundOutcome outcome_of(const std::vector<std::optional<RoundReport>>& reports) const {
    RoundOutcome o;
    for (size_t rank = 0; rank < reports.size(); ++rank) {
      const std::optional<RoundReport>& r = reports[rank];
      o.lost.push_back(!r);
      o.reached.push_back(r ? r->reached_step : 0);
      if (!r) continue;
      o.model_s = std::max(o.model_s, r->model_s);
      if (o.failure.empty() && !r->failure.empty()) {
        o.failure = r->failure;
        const bool in_round = r->failure_peer >= 0 && r->failure_peer < int(reports.size());
        o.failure_peer = in_round ? round_.members[size_t(r->failure_peer)] : r->failure_peer;
      }
    }
    return o;
  }

  // Ranks 1..N-1: false when rank 0 says the run is over; CommError when it failed.
  bool await_next(const RoundReport& report) {
    using namespace std::chrono_literals;
    // Rank 0 may wait for an operation's deadline, then for the reports' (decide()).
    const auto start =
        rendezvous_.client()->report(report, Clock::now() + 2 * options_.timeout + 5s);
    if (!start) return false;
    next(*start, report.model_s);
    return true;
  }

  // This node's round ended in the events (unless it joins: it had none); the next one is
  // `start`'s.
  void next(const RoundStart& start, double model_s, bool ends_a_round = true) {
    if (ends_a_round)
      end_round_in_events(options_.events, {node_id()}, epoch_, model_s, round_.round);
    round_start_ = start;
    rank_ = start.rank;
    round_ = {.round = start.round,
              .members = start.nodes,
              .model_start_s = start.model_start_s,
              .shares_state = start.shares_state};
  }

  const NodeProcessOptions& p_;
  const ClusterOptions& options_;
  const ElasticSpec& spec_;
  const RoundFunction& fn_;
  const CheckpointSource& newest_checkpoint_;
  const Clock::time_point since_;
  Rendezvous rendezvous_;
  const Clock::time_point epoch_;
  int rank_;
  ElasticRound round_;
  RoundStart round_start_;            // rank 0: what it announces for the next round
  std::vector<int> survivor_ranks_;   // rank 0: the last round's ranks that go on
  std::optional<TrainState> resume_;  // rank 0: what the next round goes on from
  int next_node_ = 0;                 // rank 0: the number a node that joins gets
  std::vector<MembershipChange> changes_;
};

}  // namespace

void run_node_process(const NodeProcessOptions& p, const ClusterOptions& options,
                      const NodeFunction& fn) {
  const Clock::time_point since = Clock::now();
  Rendezvous rendezvous(p, options.nodes, since, since + options.timeout, false);
  RoundNode node(p, options, p.rank, rendezvous, job_epoch(rendezvous));
  if (p.on_listening) p.on_listening(node.port());
  if (!node.run(rendezvous.finish(node.port()), fn, options.timeout)) throw crashed(p.rank);
}

std::vector<MembershipChange> run_elastic_node_process(const NodeProcessOptions& p,
                                                       const ClusterOptions& options,
                                                       const ElasticSpec& spec,
                                                       const RoundFunction& fn,
                                                       const CheckpointSource& newest_checkpoint) {
  return ElasticRounds(p, options, spec, fn, newest_checkpoint).run();
}

}  // namespace dsgd::sim
