#include "sim/cluster.h"

#include <sys/prctl.h>

#include <atomic>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/errors.h"

namespace dsgd::sim {
namespace {

std::string describe(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

}  // namespace

const NodeOptions& ClusterOptions::node_of(int rank) const {
  auto it = node_overrides.find(rank);
  return it != node_overrides.end() ? it->second : node;
}

void run_cluster(const ClusterOptions& options, const NodeFunction& fn) {
  using namespace std::chrono_literals;
  const int n = options.nodes;
  if (n < 1 || n > kMaxNodes)
    throw UsageError(
        fmt::format("--nodes {}: a simulated cluster has 1 to {} nodes", n, kMaxNodes));
  for (const auto& [rank, _] : options.node_overrides)
    if (rank < 0 || rank >= n)
      throw UsageError(fmt::format("node {} in the scenario is not a rank of {} nodes", rank, n));
  Network network(options.network, n);
  SimControl own_control;
  SimControl& control = options.control ? *options.control : own_control;
  const Clock::time_point epoch = Clock::now();
  const JobIdentity job{.token = random_token()};  // refuses any connection not of this run
  std::vector<std::unique_ptr<SimNode>> nodes;
  nodes.reserve(n);
  for (int r = 0; r < n; ++r) {
    nodes.push_back(std::make_unique<SimNode>(r, n, options.node_of(r), network, control.clock()));
    nodes.back()->set_timeout(options.timeout);
    nodes.back()->set_events(options.events);
    nodes.back()->set_epoch(epoch);
    nodes.back()->set_job(job);
  }
  // Full mesh: the higher rank connects to the lower, which accepts at once, so each
  // accepted socket is the one just connected and set-up needs no extra thread.
  for (int j = 1; j < n; ++j)
    for (int i = 0; i < j; ++i) {
      nodes[j]->connect(i, nodes[i]->port());
      nodes[i]->accept_one();
    }
  for (auto& node : nodes)
    node->start();
  std::vector<SimNode*> raw;
  for (auto& node : nodes)
    raw.push_back(node.get());
  control.attach(raw);

  std::mutex failure_mutex;
  std::exception_ptr first_failure;
  std::string deadlock;
  auto fail = [&](int rank, std::exception_ptr error) {
    {
      std::lock_guard lock(failure_mutex);
      if (first_failure) return;  // later failures are consequences of the first
      first_failure = error;
    }
    const std::string reason = fmt::format("rank {} failed: {}", rank, describe(error));
    for (int r = 0; r < n; ++r)
      if (r != rank) nodes[r]->abort(reason);
  };

  std::atomic<int> running{n};
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      prctl(PR_SET_TIMERSLACK, 1000UL);  // precise sleeps for the link model's arrivals
      try {
        fn(*nodes[r]);
        nodes[r]->flush(Clock::now() + options.timeout);
      } catch (const NodeCrashed&) {
        nodes[r]->crash();  // peers see the connections drop, as with a dead process
      } catch (...) {
        fail(r, std::current_exception());
      }
      nodes[r]->mailbox().set_done();
      running.fetch_sub(1);
    });
  }
  // Watchdog: a deadlock seen twice in a row, 20 ms apart, is reported and ends the run.
  int strikes = 0;
  while (running.load() > 0) {
    std::this_thread::sleep_for(20ms);
    if (!options.detect_deadlock || running.load() == 0) continue;
    auto report = find_deadlock(raw);
    strikes = report ? strikes + 1 : 0;
    if (strikes >= 2) {
      deadlock = *report;
      for (auto& node : nodes)
        node->abort(deadlock);
      break;
    }
  }
  for (auto& t : threads)
    t.join();
  control.detach();
  for (auto& node : nodes)
    node->close();
  if (!deadlock.empty()) throw DeadlockError(deadlock);
  if (first_failure) std::rethrow_exception(first_failure);
}

}  // namespace dsgd::sim
