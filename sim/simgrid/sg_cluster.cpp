#include "sim/simgrid/sg_cluster.h"

#include <atomic>
#include <exception>
#include <memory>
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

SgResult run_simgrid(const ClusterOptions& options, const NodeFunction& fn, const SgOptions& sg) {
  if (options.nodes < 1)
    throw UsageError(fmt::format("--nodes {}: use at least 1 node", options.nodes));
  check_supported(options, sg.lv08);
  if (engine_used.exchange(true))
    throw UsageError(
        "--backend simgrid: SimGrid runs one simulation per process, and this process has run "
        "one already; start another dsgd for the next run");
  std::unique_ptr<sg4::Engine> engine = start_engine(sg.lv08);
  SgPlatform platform = build_platform(options, sg.lv08);
  const std::vector<sg4::Host*> hosts = platform.hosts;
  SgFabric fabric(std::move(platform), options.node.eager_bytes, sg.phantom);
  RunState state;
  state.finished.assign(options.nodes, false);
  const Clock::time_point epoch = options.epoch.value_or(Clock::now());
  for (int r = 0; r < options.nodes; ++r) {
    const NodeOptions& node = options.node_of(r);
    auto comm = std::make_unique<SgCommunicator>(
        r, options.nodes, fabric, sg.compute, node.gflops * 1e9, node.straggler,
        SgCrash{.at_step = node.crash_at_step, .at_s = node.crash_at_s});
    comm->set_timeout(options.timeout);
    comm->set_events(options.events);
    comm->set_epoch(epoch);
    state.comms.push_back(std::move(comm));
  }
  sg4::Engine::on_deadlock_cb([&state] { state.deadlock = deadlock_report(state); });
  for (int r = 0; r < options.nodes; ++r)
    sg4::Actor::create(fmt::format("rank{}", r), hosts[r],
                       [&state, &fn, r] { run_rank(state, fn, r); });
  if (sg.step) {
    fabric.set_step_gate(sg.step);
    sg4::Actor::create("stepper", hosts[0], [&fabric] { fabric.step_loop(); });
  }
  engine->run();
  if (state.failure) std::rethrow_exception(state.failure);
  if (!state.deadlock.empty()) throw DeadlockError(state.deadlock);
  return {.simulated_s = state.last_finish_s, .links = fabric.link_use()};
}

}  // namespace dsgd::sim::sg
