#include "sim/wait_text.h"

#include <fmt/format.h>

#include "core/comm/collective_tags.h"
#include "core/comm/communicator.h"

namespace dsgd::sim {

namespace {
std::string peer_text(int peer) {
  return peer == kAnySource ? "any rank" : fmt::format("rank {}", peer);
}
}  // namespace

std::string blocked_recv_text(int rank, int peer, int tag) {
  return fmt::format("rank {} waits in recv from {}, {}", rank, peer_text(peer), tag_text(tag));
}

std::string blocked_send_text(int rank, int peer, int tag, size_t bytes, size_t eager_bytes) {
  return fmt::format(
      "rank {} waits in send to {}, {} ({} bytes, over the eager limit of {} bytes: it waits for "
      "{} to post the receive)",
      rank, peer_text(peer), tag_text(tag), bytes, eager_bytes, peer_text(peer));
}

std::string lost_peer_text(int rank, int peer, bool is_recv, int tag, const std::string& reason) {
  return fmt::format("rank {}: lost rank {} while waiting to {} it ({}): {}", rank, peer,
                     is_recv ? "receive from" : "send to", tag_text(tag), reason);
}

std::string deadlock_text(const std::string& report) {
  return "deadlock: every running rank is blocked and no message is in flight: " + report;
}

}  // namespace dsgd::sim
