// SimNode's connections, made when a pair first talks: the first send to a peer dials it
// (connector.h), and every wait takes the connections peers made meanwhile. Every function
// here runs on the rank thread.
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/errors.h"
#include "sim/handshake.h"
#include "sim/node.h"

namespace dsgd::sim {

// A connection to `dst` for `op`'s send, taken from the peer if it connected first, else
// dialled. false when there is none to be had: the peer is lost, and so is `op`.
bool SimNode::open_link(int dst, const std::shared_ptr<OpState>& op) {
  take_incoming();
  if (has_link(dst)) return true;
  Dialed d = connector_->dial(dst);
  if (d.fd < 0) {
    const std::string why =
        d.where.empty() ? d.why
                        : fmt::format("cannot connect to rank {} at {}: {}", dst, d.where, d.why);
    drop_peer(dst, why);
    mailbox_.complete(op, std::make_exception_ptr(CommError(
                              fmt::format("rank {}: lost rank {}: {}", rank_, dst, why), dst)));
    return false;
  }
  add_link(dst, d.fd, d.connecting, d.where);
  if (!d.hello.empty()) {  // a whole frame, its payload whole floats: it goes out first
    OutFrame hello;
    std::copy_n(d.hello.begin(), hello.header.size(), hello.header.begin());
    hello.owned.resize((d.hello.size() - hello.header.size()) / sizeof(float));
    std::memcpy(hello.owned.data(), d.hello.data() + hello.header.size(),
                hello.owned.size() * sizeof(float));
    hello.data = hello.owned;
    peers_[dst]->outbox.push_back(std::move(hello));
    frames_queued_.fetch_add(1, std::memory_order_relaxed);
  }
  if (d.connecting) await_connect(dst);
  return true;
}

// The peer's listener takes a connection only with a hello within kHelloTimeout, and only the
// rank thread writes it (when it sends or waits): a rank that sends once and then computes
// for longer (a lesson's rank 0 running demos of its own) would leave it unsent. So the first
// send finishes its connect, within that time, and its frames then go out with it.
void SimNode::await_connect(int peer) {
  Peer& p = *peers_[peer];
  if (p.link_count == 0 || !p.links[0].connecting) return;
  pollfd out{.fd = p.links[0].fd, .events = POLLOUT, .revents = 0};
  const auto limit = std::chrono::duration_cast<std::chrono::milliseconds>(kHelloTimeout);
  if (::poll(&out, 1, static_cast<int>(limit.count())) == 1) finish_connect(peer);
}

void SimNode::take_incoming() {
  incoming_.clear();
  connector_->take_incoming(incoming_);
  for (const Incoming& in : incoming_)
    add_link(in.peer, in.fd);
}

void SimNode::add_link(int peer, int fd, bool connecting, std::string where) {
  {
    std::lock_guard lock(fds_mutex_);
    fds_.push_back(fd);  // closed by close() whatever becomes of it
  }
  Peer& p = *peers_[peer];
  if (p.lost || p.link_count == static_cast<int>(p.links.size())) {
    ::shutdown(fd, SHUT_RDWR);  // too late, or one too many: the peer sees EOF
    return;
  }
  Link& link = p.links[p.link_count++];
  link = Link{};
  link.fd = fd;
  link.connecting = connecting;
  link.where = std::move(where);
  if (p.link_count == 1) linked_.push_back(peer);
}

// The non-blocking connect of the peer's first link is done: made, or failed.
void SimNode::finish_connect(int peer) {
  Link& link = peers_[peer]->links[0];
  int error = 0;
  socklen_t n = sizeof error;
  if (::getsockopt(link.fd, SOL_SOCKET, SO_ERROR, &error, &n) != 0) error = errno;
  if (error == 0) {
    link.connecting = false;
    return;
  }
  drop_peer(peer, fmt::format("cannot connect to rank {} at {}: {}", peer, link.where,
                              std::strerror(error)));
}

}  // namespace dsgd::sim
