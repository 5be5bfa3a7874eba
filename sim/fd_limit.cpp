#include "sim/fd_limit.h"

#include <sys/resource.h>

#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "core/comm/collective_pairs.h"

namespace dsgd::sim {

uint64_t raise_open_file_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) return raised.rlim_cur;
  }
  return limit.rlim_cur;
}

uint64_t open_file_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return UINT64_MAX;
  return limit.rlim_cur;
}

int64_t open_file_count() {
  std::error_code ec;
  int64_t n = 0;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end;
       it.increment(ec))
    ++n;
  return n > 0 ? n - 1 : 0;  // less the one the listing itself holds
}

int64_t fds_needed(int nodes, int64_t pairs, int64_t open_now) {
  return open_now + kFdReserve + nodes + 2 * std::max<int64_t>(pairs, 0);
}

void check_fd_budget(int nodes, int64_t pairs) {
  const uint64_t limit = open_file_limit();
  const int64_t open_now = open_file_count();
  const int64_t needed = fds_needed(nodes, pairs, open_now);
  if (static_cast<uint64_t>(needed) <= limit) return;
  const std::string what =
      pairs < 0 ? fmt::format("{} simulated nodes need at least {} open files", nodes, needed)
                : fmt::format(
                      "{} simulated nodes talking over {} rank pairs need {} open files "
                      "(one per node, two per pair, {} for the process)",
                      nodes, pairs, needed, open_now + kFdReserve);
  const auto ring = static_cast<int64_t>(
      collective_pairs(CollectiveOp::all_reduce, Algorithm::ring, nodes, 0).size());
  const int64_t ring_needed = fds_needed(nodes, ring, open_now);
  const std::string ring_hint =
      pairs > ring && static_cast<uint64_t>(ring_needed) <= limit
          ? fmt::format(", or --allreduce ring ({} pairs: {} files)", ring, ring_needed)
          : "";
  throw UsageError(fmt::format(
      "{}, but this process may open {} (ulimit -n); raise the limit (ulimit -n {}), use "
      "fewer --nodes{}",
      what, limit, needed, ring_hint));
}

UsageError fd_limit_error(const std::string& doing) {
  return UsageError(fmt::format(
      "{}: out of file descriptors: this process may open {} (ulimit -n) and has {} open; "
      "raise the limit (ulimit -n), use fewer --nodes, or --allreduce ring, which connects "
      "the fewest rank pairs",
      doing, open_file_limit(), open_file_count()));
}

}  // namespace dsgd::sim
