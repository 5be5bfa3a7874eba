#include "sim/cluster.h"

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

void run_cluster(const ClusterOptions& options, const NodeFunction& fn) {
  const int n = options.nodes;
  if (n < 1 || n > kMaxNodes)
    throw UsageError(
        fmt::format("--nodes {}: a simulated cluster has 1 to {} nodes", n, kMaxNodes));
  const Clock::time_point epoch = Clock::now();
  std::vector<std::unique_ptr<SimNode>> nodes;
  nodes.reserve(n);
  for (int r = 0; r < n; ++r) {
    nodes.push_back(std::make_unique<SimNode>(r, n, options.node));
    nodes.back()->set_timeout(options.timeout);
    nodes.back()->set_events(options.events);
    nodes.back()->set_epoch(epoch);
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

  std::mutex failure_mutex;
  std::exception_ptr first_failure;
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

  std::vector<std::thread> threads;
  threads.reserve(n);
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      try {
        fn(*nodes[r]);
        nodes[r]->flush(Clock::now() + options.timeout);
      } catch (...) {
        fail(r, std::current_exception());
      }
    });
  }
  for (auto& t : threads)
    t.join();
  for (auto& node : nodes)
    node->close();
  if (first_failure) std::rethrow_exception(first_failure);
}

}  // namespace dsgd::sim
