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
#include "sim/fd_limit.h"
#include "sim/node_setup.h"

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

void check_cluster(const ClusterOptions& options) {
  const int n = options.nodes;
  if (n < 1 || n > kMaxNodes)
    throw UsageError(
        fmt::format("--nodes {}: a simulated cluster has 1 to {} nodes", n, kMaxNodes));
  for (const auto& [rank, _] : options.node_overrides)
    if (rank < 0 || rank >= n)
      throw UsageError(fmt::format("node {} in the scenario is not a rank of {} nodes", rank, n));
  check_fd_budget(n, options.pairs);
}

// The node threads of one run, and how it ended: the first failure (which aborts the other
// nodes) or a deadlock the watchdog found.
class NodeThreads {
 public:
  explicit NodeThreads(std::vector<SimNode*> nodes)
      : nodes_(std::move(nodes)), running_(static_cast<int>(nodes_.size())) {}

  // Runs `fn` on every node, each in a thread of its own, and returns when all are done.
  void run(const NodeFunction& fn, const ClusterOptions& options) {
    std::vector<std::thread> threads;
    threads.reserve(nodes_.size());
    for (int r = 0; r < static_cast<int>(nodes_.size()); ++r)
      threads.emplace_back([&, r] {
        prctl(PR_SET_TIMERSLACK, 1000UL);  // precise sleeps for the link model's arrivals
        try {
          if (!run_node_function(*nodes_[r], fn, options.timeout) && options.on_crash)
            options.on_crash(r);
        } catch (...) {
          fail(r, std::current_exception());
        }
        nodes_[r]->mailbox().set_done();
        running_.fetch_sub(1);
      });
    watch(options.detect_deadlock);
    for (auto& t : threads)
      t.join();
  }

  // DeadlockError, else the first failure; nothing when every node's function returned.
  void rethrow() const {
    if (!deadlock_.empty()) throw DeadlockError(deadlock_);
    if (first_failure_) std::rethrow_exception(first_failure_);
  }

 private:
  void fail(int rank, std::exception_ptr error) {
    {
      std::lock_guard lock(failure_mutex_);
      if (first_failure_) return;  // later failures are consequences of the first
      first_failure_ = error;
    }
    const std::string reason = fmt::format("rank {} failed: {}", rank, describe(error));
    for (int r = 0; r < static_cast<int>(nodes_.size()); ++r)
      if (r != rank) nodes_[r]->abort(reason);
  }

  // Watchdog: a deadlock seen twice in a row, 20 ms apart, is reported and ends the run.
  void watch(bool detect_deadlock) {
    using namespace std::chrono_literals;
    int strikes = 0;
    while (running_.load() > 0) {
      std::this_thread::sleep_for(20ms);
      if (!detect_deadlock || running_.load() == 0) continue;
      auto report = find_deadlock(nodes_);
      strikes = report ? strikes + 1 : 0;
      if (strikes >= 2) {
        deadlock_ = *report;
        for (SimNode* node : nodes_)
          node->abort(deadlock_);
        return;
      }
    }
  }

  const std::vector<SimNode*> nodes_;
  std::atomic<int> running_;
  std::mutex failure_mutex_;
  std::exception_ptr first_failure_;
  std::string deadlock_;
};

}  // namespace

const NodeOptions& ClusterOptions::node_of(int rank) const {
  auto it = node_overrides.find(rank);
  return it != node_overrides.end() ? it->second : node;
}

void run_cluster(const ClusterOptions& options, const NodeFunction& fn) {
  check_cluster(options);
  Network network(options.network, options.nodes);
  SimControl own_control;
  SimControl& control = options.control ? *options.control : own_control;
  // The token refuses any connection not of this run.
  const NodeJob job{.job = {.token = random_token()},
                    .epoch = options.epoch.value_or(Clock::now())};
  LoopbackHub hub(options.nodes);  // before the nodes: they use it until they are gone
  std::vector<std::unique_ptr<SimNode>> nodes;
  nodes.reserve(options.nodes);
  for (int r = 0; r < options.nodes; ++r)
    nodes.push_back(make_node(options, r, network, control.clock(), job, &hub));
  std::vector<SimNode*> raw;
  for (auto& node : nodes) {
    node->start();
    raw.push_back(node.get());
  }
  control.attach(raw, &network);
  NodeThreads threads(raw);
  threads.run(fn, options);
  control.detach();
  for (auto& node : nodes)
    node->close();
  threads.rethrow();
}

}  // namespace dsgd::sim
