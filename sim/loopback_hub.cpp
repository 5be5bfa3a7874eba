#include "sim/loopback_hub.h"

#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "core/errors.h"
#include "sim/fd_limit.h"
#include "sim/mailbox.h"

namespace dsgd::sim {
namespace {

// How long the hub waits for the kernel to queue the connection it just made (loopback:
// at once; the bound only keeps a broken kernel from hanging a node).
constexpr std::chrono::milliseconds kAcceptWait{5000};

bool out_of_descriptors(int e) {
  return e == EMFILE || e == ENFILE;
}

std::string address_text(const sockaddr_in& a) {
  char host[INET_ADDRSTRLEN] = "?";
  ::inet_ntop(AF_INET, &a.sin_addr, host, sizeof host);
  return fmt::format("{}:{}", host, ntohs(a.sin_port));
}

bool same_address(const sockaddr_in& x, const sockaddr_in& y) {
  return x.sin_port == y.sin_port && x.sin_addr.s_addr == y.sin_addr.s_addr;
}

void no_delay(int fd) {
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

[[noreturn]] void fail(const std::string& doing, int error) {
  if (out_of_descriptors(error)) throw fd_limit_error(doing);
  throw CommError(fmt::format("{}: {}", doing, std::strerror(error)), -1);
}

}  // namespace

// The connector of one node: the hub, seen from that node.
class HubConnector final : public Connector {
 public:
  HubConnector(LoopbackHub& hub, int rank) : hub_(hub), rank_(rank) {}
  uint16_t port() const override { return hub_.port(); }
  void start() override {}
  Dialed dial(int peer) override { return hub_.dial(rank_, peer); }
  void take_incoming(std::vector<Incoming>& out) override {
    if (hub_.has_queued_[rank_].load(std::memory_order_acquire)) hub_.take_incoming(rank_, out);
  }
  void crashed(const std::string& reason) override { hub_.crashed(rank_, reason); }
  void close() override {}

 private:
  LoopbackHub& hub_;
  const int rank_;
};

LoopbackHub::LoopbackHub(int world)
    : world_(world),
      members_(world),
      paired_(static_cast<size_t>(world) * world, 0),
      has_queued_(std::make_unique<std::atomic<bool>[]>(world)) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) fail("the simulated cluster's listening socket", errno);
  address_.sin_family = AF_INET;
  address_.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t n = sizeof address_;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address_), sizeof address_) != 0 ||
      ::listen(listen_fd_, SOMAXCONN) != 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address_), &n) != 0) {
    const int e = errno;
    ::close(listen_fd_);
    fail("the simulated cluster's listening socket on 127.0.0.1", e);
  }
  port_ = ntohs(address_.sin_port);
}

LoopbackHub::~LoopbackHub() {
  for (Member& m : members_)
    for (const Incoming& in : m.queued)
      ::close(in.fd);
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

std::unique_ptr<Connector> LoopbackHub::join(int rank, Mailbox& mailbox, RefusalLog& refusals) {
  std::lock_guard lock(mutex_);
  members_[rank].mailbox = &mailbox;
  members_[rank].refusals = &refusals;
  return std::make_unique<HubConnector>(*this, rank);
}

Dialed LoopbackHub::dial(int self, int peer) {
  std::lock_guard lock(mutex_);
  Member& target = members_[peer];
  if (!target.crashed.empty()) return {.why = target.crashed};
  if (paired(self, peer)) {
    // The peer connected first: its end for this node is still queued (the node takes its
    // queue before it dials, but the peer may have queued it since).
    std::vector<Incoming>& mine = members_[self].queued;
    for (auto it = mine.begin(); it != mine.end(); ++it)
      if (it->peer == peer) {
        const int fd = it->fd;
        mine.erase(it);
        has_queued_[self].store(!mine.empty(), std::memory_order_release);
        return {.fd = fd};
      }
    throw std::logic_error(fmt::format("rank {} dials rank {} twice", self, peer));
  }
  const auto [mine, theirs] = connect_pair(self, peer);
  paired(self, peer) = paired(peer, self) = 1;
  target.queued.push_back({.peer = self, .fd = theirs});
  has_queued_[peer].store(true, std::memory_order_release);
  if (target.mailbox) target.mailbox->wake();
  return {.fd = mine};
}

void LoopbackHub::take_incoming(int self, std::vector<Incoming>& out) {
  std::lock_guard lock(mutex_);
  std::vector<Incoming>& queued = members_[self].queued;
  out.insert(out.end(), queued.begin(), queued.end());
  queued.clear();
  has_queued_[self].store(false, std::memory_order_release);
}

void LoopbackHub::crashed(int self, const std::string& reason) {
  std::lock_guard lock(mutex_);
  Member& me = members_[self];
  me.crashed = reason.empty() ? "crashed" : reason;
  // Ends made for it that it never took: their dialers see EOF, as from its own.
  for (const Incoming& in : me.queued)
    ::shutdown(in.fd, SHUT_RDWR);
  for (int r = 0; r < world_; ++r)
    if (r != self && !paired(self, r) && members_[r].mailbox)
      members_[r].mailbox->peer_lost(self, me.crashed + " (it had not connected to this rank)");
}

std::pair<int, int> LoopbackHub::connect_pair(int self, int peer) {
  refuse_waiting(self);
  const std::string doing = fmt::format("rank {}: connecting to rank {}", self, peer);
  const int mine = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (mine < 0) fail(doing, errno);
  sockaddr_in local{};
  socklen_t n = sizeof local;
  if (::connect(mine, reinterpret_cast<const sockaddr*>(&address_), sizeof address_) != 0 ||
      ::getsockname(mine, reinterpret_cast<sockaddr*>(&local), &n) != 0) {
    const int e = errno;
    ::close(mine);
    fail(doing, e);
  }
  int theirs = -1;
  try {
    theirs = accept_from(local, self);
  } catch (...) {
    ::close(mine);
    throw;
  }
  no_delay(mine);
  no_delay(theirs);
  return {mine, theirs};
}

// Accepts until the connection from `from` comes; any other is foreign and refused.
int LoopbackHub::accept_from(const sockaddr_in& from, int self) {
  const auto deadline = std::chrono::steady_clock::now() + kAcceptWait;
  while (true) {
    sockaddr_in remote{};
    const int fd = accept_one(&remote, self);
    if (fd >= 0 && same_address(remote, from)) return fd;
    if (fd >= 0) {
      refuse(fd, remote, self);
      continue;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      throw CommError(fmt::format("rank {}: its connection to the cluster's port 127.0.0.1:{} "
                                  "was not queued within {} ms",
                                  self, port_, kAcceptWait.count()),
                      -1);
    pollfd p{.fd = listen_fd_, .events = POLLIN, .revents = 0};
    ::poll(&p, 1, static_cast<int>(left.count()));
  }
}

// Foreign connections queued on the port: closed unread now, before they fill its backlog.
void LoopbackHub::refuse_waiting(int self) {
  sockaddr_in remote{};
  for (int fd; (fd = accept_one(&remote, self)) >= 0;)
    refuse(fd, remote, self);
}

// The next queued connection, or -1 when none is.
int LoopbackHub::accept_one(sockaddr_in* remote, int self) {
  while (true) {
    socklen_t n = sizeof *remote;
    const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(remote), &n, SOCK_CLOEXEC);
    if (fd >= 0) return fd;
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return -1;
    fail(fmt::format("rank {}: accepting its own connection", self), errno);
  }
}

void LoopbackHub::refuse(int fd, const sockaddr_in& remote, int self) {
  ::close(fd);
  const std::string line =
      fmt::format("{}: not a connection of this run (the port takes its own nodes' only)",
                  address_text(remote));
  fmt::print(stderr, "dsgd: rank {} refused a connection from {}\n", self, line);
  std::fflush(stderr);
  members_[self].refusals->add(line);
}

}  // namespace dsgd::sim
