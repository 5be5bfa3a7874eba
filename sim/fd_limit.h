// The process's limit on open file descriptors (RLIMIT_NOFILE) and what the simulated
// nodes of one process need of it: one eventfd per node, both ends of every connected pair
// (nodes connect the pairs that talk, when they first talk), the hub's listening socket,
// and a reserve for the files a run writes. A run that cannot fit is refused before any
// node starts; running out during a run names the limit, not a peer.
// Not an allocator: it counts and explains.
#pragma once

#include <cstdint>
#include <string>

#include "core/errors.h"

namespace dsgd::sim {

// Files a run may open besides its nodes' (trace, metrics, checkpoints) and the hub's port.
inline constexpr int64_t kFdReserve = 16;

// Raises the soft limit to the hard one (dsgd and dsgd-gui do it once, at start); returns
// the soft limit then.
uint64_t raise_open_file_limit();
uint64_t open_file_limit();  // the soft limit now
int64_t open_file_count();   // descriptors open now (/proc/self/fd); 0 if unreadable

// What one process of `nodes` simulated nodes talking over `pairs` rank pairs needs, when
// `open_now` descriptors are open before they start.
int64_t fds_needed(int nodes, int64_t pairs, int64_t open_now);

// Before any node starts: UsageError, in one line with the numbers and what to do, when
// `nodes` nodes talking over `pairs` rank pairs (-1: not known: only the nodes are counted)
// cannot fit under the limit.
void check_fd_budget(int nodes, int64_t pairs);

// The error for a descriptor that could not be made while `doing` ("rank 23: connecting to
// rank 29"): names the limit and what to do.
UsageError fd_limit_error(const std::string& doing);

}  // namespace dsgd::sim
