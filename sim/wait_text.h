// How a rank blocked for good is told in a deadlock report ("rank 0 waits in recv from
// rank 1, tag 0") or in the error of a wait on a lost peer, the same for every backend that
// finds them (the simulated nodes, SimGrid's).
#pragma once

#include <cstddef>
#include <string>

namespace dsgd::sim {

// A rank waiting in a receive from `peer` (kAnySource: any rank) with `tag`.
std::string blocked_recv_text(int rank, int peer, int tag);
// A rank waiting in a send of `bytes` to `peer`, above the eager limit, for its receive.
std::string blocked_send_text(int rank, int peer, int tag, size_t bytes, size_t eager_bytes);
// A rank whose receive from (or send to) `peer` with `tag` cannot end: the peer is lost,
// for `reason` ("rank 0: lost rank 1 while waiting to receive from it (tag 0): ...").
std::string lost_peer_text(int rank, int peer, bool is_recv, int tag, const std::string& reason);
// "deadlock: every running rank is blocked and no message is in flight: " + report.
std::string deadlock_text(const std::string& report);

}  // namespace dsgd::sim
