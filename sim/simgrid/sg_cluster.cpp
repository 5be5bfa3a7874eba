#include "sim/simgrid/sg_cluster.h"

#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <simgrid/Exception.hpp>
#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include <fmt/format.h>

#include "core/errors.h"
#include "sim/simgrid/sg_platform.h"
#include "sim/wait_text.h"

namespace sg4 = simgrid::s4u;

namespace dsgd::sim::sg {

namespace {

std::atomic<bool> engine_used{false};

std::unique_ptr<sg4::Engine> start_engine(bool lv08) {
  // SimGrid logs its configuration changes and the deadlocks it finds: dsgd reports both
  // its own way.
  xbt_log_control_set("root.thresh:warning");
  xbt_log_control_set("ker_engine.app:file:/dev/null ker_engine.additivity:0");
  static char name[] = "dsgd";
  static char* argv[] = {name, nullptr};
  int argc = 1;
  auto engine = std::make_unique<sg4::Engine>(&argc, argv);
  if (lv08) {
    engine->set_config("network/model:LV08");  // its factors, cross traffic and window bound
  } else {
    engine->set_config("network/model:CM02");
    engine->set_config("network/crosstraffic:0");
    engine->set_config("network/TCP-gamma:0");  // no window bound on a flow's rate
  }
  // Actors run one at a time in this thread: SgFabric sets kernel timers from them.
  engine->set_config("contexts/nthreads:1");
  return engine;
}

// What each rank is doing, and the first failure.
struct RunState {
  std::vector<std::unique_ptr<SgCommunicator>> comms;
  std::vector<bool> finished;
  int failed_rank = -1;
  std::exception_ptr failure;
  std::string deadlock;
  double last_finish_s = 0;
};

void run_rank(RunState& state, const NodeFunction& fn, int rank) {
  try {
    fn(*state.comms[rank]);
    state.finished[rank] = true;
    state.last_finish_s = std::max(state.last_finish_s, sg4::Engine::get_clock());
  } catch (const simgrid::ForcefulKillException&) {
    throw;  // killed because another rank failed or the run deadlocked: SimGrid's to handle
  } catch (const NodeCrashed&) {
    state.finished[rank] = true;  // a crash fault: the others find out from the fabric
  } catch (...) {
    state.finished[rank] = true;
    if (state.failure) return;
    state.failure = std::current_exception();
    state.failed_rank = rank;
    state.comms[rank]->fabric().stop();
    sg4::Actor::kill_all();
  }
}

std::string deadlock_report(const RunState& state) {
  std::string report;
  for (size_t r = 0; r < state.comms.size(); ++r) {
    if (state.finished[r]) continue;
    const std::string blocked = state.comms[r]->blocked();
    if (blocked.empty()) continue;
    if (!report.empty()) report += "; ";
    report += blocked;
  }
  return deadlock_text(report);
}

}  // namespace

struct SgRounds::Impl {
  SgOptions sg;
  std::unique_ptr<sg4::Engine> engine;
  SgPlatform platform;  // of the first round's nodes
  RunState* running = nullptr;
  std::optional<SgFabric> fabric;  // the round's (one at a time: SgFabric's signal)

  void start_ranks(const ClusterOptions& round, const NodeFunction& fn, RunState& state);
};

SgRounds::SgRounds(const ClusterOptions& first, const SgOptions& sg)
    : impl_(std::make_unique<Impl>()) {
  if (first.nodes < 1)
    throw UsageError(fmt::format("--nodes {}: use at least 1 node", first.nodes));
  check_supported(first, sg.lv08);
  if (engine_used.exchange(true))
    throw UsageError(
        "--backend simgrid: SimGrid runs one simulation per process, and this process has run "
        "one already; start another dsgd for the next run");
  impl_->sg = sg;
  impl_->engine = start_engine(sg.lv08);
  impl_->platform = build_platform(first, sg.lv08);
  sg4::Engine::on_deadlock_cb([impl = impl_.get()] {
    if (impl->running) impl->running->deadlock = deadlock_report(*impl->running);
  });
}

SgRounds::~SgRounds() = default;

void SgRounds::Impl::start_ranks(const ClusterOptions& round, const NodeFunction& fn,
                                 RunState& state) {
  const Clock::time_point epoch = round.epoch.value_or(Clock::now());
  for (int r = 0; r < round.nodes; ++r) {
    const NodeOptions& node = round.node_of(r);
    auto comm = std::make_unique<SgCommunicator>(
        r, round.nodes, *fabric, sg.compute, node.gflops * 1e9, node.straggler,
        SgCrash{.at_step = node.crash_at_step, .at_s = node.crash_at_s, .fired = round.on_crash});
    comm->set_timeout(round.timeout);
    comm->set_events(round.events);
    comm->set_epoch(epoch);
    state.comms.push_back(std::move(comm));
  }
  for (int r = 0; r < round.nodes; ++r)
    sg4::Actor::create(fmt::format("rank{}", r), fabric->host(r),
                       [&state, &fn, r] { run_rank(state, fn, r); });
  if (sg.step) {
    fabric->set_step_gate(sg.step);
    sg4::Actor::create("stepper", fabric->host(0), [this] { fabric->step_loop(); });
  }
}

SgResult SgRounds::run(const ClusterOptions& round, const std::vector<int>& members,
                       const NodeFunction& fn) {
  SgPlatform platform = impl_->platform;
  platform.network = round.network;  // renumbered for the round's ranks
  platform.hosts.clear();
  for (int node : members)
    platform.hosts.push_back(impl_->platform.hosts[static_cast<size_t>(node)]);
  impl_->fabric.reset();
  impl_->fabric.emplace(std::move(platform), round.node.eager_bytes, impl_->sg.phantom);
  RunState state;
  state.finished.assign(round.nodes, false);
  impl_->start_ranks(round, fn, state);
  impl_->running = &state;
  impl_->engine->run();
  impl_->running = nullptr;
  if (state.failure) std::rethrow_exception(state.failure);
  if (!state.deadlock.empty()) throw DeadlockError(state.deadlock);
  return {.simulated_s = state.last_finish_s, .links = impl_->fabric->link_use()};
}

SgResult run_simgrid(const ClusterOptions& options, const NodeFunction& fn, const SgOptions& sg) {
  SgRounds rounds(options, sg);
  std::vector<int> members(static_cast<size_t>(options.nodes));
  for (int r = 0; r < options.nodes; ++r)
    members[static_cast<size_t>(r)] = r;
  return rounds.run(options, members, fn);
}

}  // namespace dsgd::sim::sg
