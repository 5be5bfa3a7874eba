// How a rank blocked for good is told in a deadlock report ("rank 0 waits in recv from
// rank 1, tag 0"), the same for every backend that finds deadlocks (the simulated nodes'
// detector, SimGrid's).
#pragma once

#include <cstddef>
#include <string>

namespace dsgd::sim {

// A rank waiting in a receive from `peer` (kAnySource: any rank) with `tag`.
std::string blocked_recv_text(int rank, int peer, int tag);
// A rank waiting in a send of `bytes` to `peer`, above the eager limit, for its receive.
std::string blocked_send_text(int rank, int peer, int tag, size_t bytes, size_t eager_bytes);
// "deadlock: every running rank is blocked and no message is in flight: " + report.
std::string deadlock_text(const std::string& report);

}  // namespace dsgd::sim
