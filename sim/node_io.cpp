// SimNode's progress engine: the rank thread's poll over its peers' sockets, reading frames
// into the Mailbox and writing queued ones. Every function here runs on the rank thread,
// except wake().
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "core/errors.h"
#include "sim/crc32c.h"
#include "sim/node.h"

namespace dsgd::sim {

namespace {
// Payload bytes still to come at or above this are read straight into the payload buffer;
// smaller frames (and headers) are read many at a time through the staging buffer.
constexpr size_t kDirectReadBytes = 8 * 1024;
// At most this many payload bytes per read, so the CRC runs over bytes still in cache.
constexpr size_t kReadChunkBytes = 256 * 1024;
// One peer's reads per pump stop after this, so one busy peer cannot starve the others.
constexpr size_t kReadBudgetBytes = 8 * 1024 * 1024;
constexpr int kMaxIov = 64;

// Set while this thread is inside pump(): a Mailbox change made by the pump itself needs
// no wake-up. Only PumpScope sets it, so an exception out of a read cannot leave it set.
thread_local bool t_pumping = false;

class PumpScope {
 public:
  PumpScope() { t_pumping = true; }
  ~PumpScope() { t_pumping = false; }
  PumpScope(const PumpScope&) = delete;
  PumpScope& operator=(const PumpScope&) = delete;
};

bool would_block(int e) {
  return e == EAGAIN || e == EWOULDBLOCK;
}
}  // namespace

void SimNode::wake() {
  if (t_pumping) return;
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof one);  // full: awake anyway
}

void SimNode::pump(Clock::time_point until) {
  if (abort_requested_.exchange(false)) {
    for (int p = 0; p < world_; ++p)
      drop_peer(p, "the run was aborted");
  }
  std::vector<pollfd>& fds = poll_fds_;
  std::vector<int>& ranks = poll_ranks_;
  fds.clear();
  ranks.clear();
  fds.push_back({.fd = wake_fd_, .events = POLLIN, .revents = 0});
  ranks.push_back(-1);
  for (int p = 0; p < world_; ++p) {
    const Peer& peer = *peers_[p];
    if (peer.fd < 0 || peer.lost) continue;
    const short events = POLLIN | (peer.outbox.empty() ? 0 : POLLOUT);
    fds.push_back({.fd = peer.fd, .events = events, .revents = 0});
    ranks.push_back(p);
  }
  const auto left = std::max(until - Clock::now(), Clock::duration::zero());
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
  const timespec timeout{.tv_sec = static_cast<time_t>(ns / 1'000'000'000),
                         .tv_nsec = static_cast<long>(ns % 1'000'000'000)};
  const int ready = ::ppoll(fds.data(), fds.size(), &timeout, nullptr);
  if (ready <= 0) return;  // timeout, or EINTR: the caller loops
  const PumpScope pumping;
  if (fds[0].revents) {
    uint64_t count = 0;
    [[maybe_unused]] const ssize_t n = ::read(wake_fd_, &count, sizeof count);
  }
  for (size_t i = 1; i < fds.size(); ++i) {
    if (!fds[i].revents) continue;
    const int p = ranks[i];
    if (fds[i].revents & POLLOUT) write_peer(p);
    if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) read_peer(p);
  }
}

// ---------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------

// Hands the kernel as much of the queue as it takes, several frames per system call.
void SimNode::write_peer(int dst) {
  Peer& p = *peers_[dst];
  while (!p.outbox.empty() && !p.lost) {
    iovec iov[kMaxIov];
    int n_iov = 0;
    for (auto f = p.outbox.begin(); f != p.outbox.end() && n_iov + 2 <= kMaxIov; ++f) {
      size_t at = f->written;
      if (at < f->header.size()) {
        iov[n_iov++] = {const_cast<uint8_t*>(f->header.data()) + at, f->header.size() - at};
        at = f->header.size();
      }
      const size_t data_at = at - f->header.size();
      if (data_at < f->data.size_bytes())
        iov[n_iov++] = {
            const_cast<uint8_t*>(reinterpret_cast<const uint8_t*>(f->data.data())) + data_at,
            f->data.size_bytes() - data_at};
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = n_iov;
    ssize_t n = ::sendmsg(p.fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (would_block(errno)) return;  // the pump waits for POLLOUT
      drop_peer(dst, fmt::format("write to rank {} failed: {}", dst, std::strerror(errno)));
      return;
    }
    while (n > 0) {
      OutFrame& f = p.outbox.front();
      const size_t take = std::min<size_t>(n, f.size() - f.written);
      f.written += take;
      n -= static_cast<ssize_t>(take);
      if (f.written < f.size()) break;
      std::shared_ptr<OpState> op = std::move(f.op);
      p.outbox.pop_front();
      frames_queued_.fetch_sub(1, std::memory_order_relaxed);
      if (op) mailbox_.complete(op);
    }
  }
}

// ---------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------

void SimNode::read_peer(int src) {
  read_available(src);
  set_low_water(*peers_[src]);
}

void SimNode::read_available(int src) {
  Peer& p = *peers_[src];
  size_t budget = kReadBudgetBytes;
  while (!p.lost && budget > 0) {
    const uint64_t body_left = p.in_body ? p.in_frame.length - p.in_done : 0;
    const bool direct = body_left >= kDirectReadBytes;
    uint8_t* into = direct ? body_at(p) : stage_.data();
    const size_t want = direct ? std::min<uint64_t>(body_left, kReadChunkBytes) : stage_.size();
    const ssize_t n = ::recv(p.fd, into, want, MSG_DONTWAIT);
    if (n == 0) return drop_peer(src, "rank closed its connection");
    if (n < 0) {
      if (errno == EINTR) continue;
      if (would_block(errno)) return;
      return drop_peer(src, fmt::format("connection lost: {}", std::strerror(errno)));
    }
    budget -= std::min<size_t>(budget, n);
    if (direct) {
      p.in_crc = crc32c(into, n, p.in_crc);
      p.in_done += n;
      if (p.in_done == p.in_frame.length && !payload_done(src)) return;
    } else if (!consume(src, into, n)) {
      return;
    }
    if (static_cast<size_t>(n) < want) return;  // drained: poll says when more comes
  }
}

// While a large payload comes in, poll wakes this thread only when a whole read's worth has
// arrived (or the rest of the payload), not for every segment the sender's kernel queued.
void SimNode::set_low_water(Peer& p) {
  if (p.lost) return;
  const uint64_t body_left = p.in_body ? p.in_frame.length - p.in_done : 0;
  const int want = body_left >= kDirectReadBytes
                       ? static_cast<int>(std::min<uint64_t>(body_left, kReadChunkBytes))
                       : 1;
  if (want == p.rcvlowat) return;
  if (::setsockopt(p.fd, SOL_SOCKET, SO_RCVLOWAT, &want, sizeof want) == 0) p.rcvlowat = want;
}

// Parses bytes read through the staging buffer: completes headers and payloads, delivering
// each whole frame. Nothing stays in the buffer: a partial header is kept in the peer.
bool SimNode::consume(int src, const uint8_t* bytes, size_t n) {
  Peer& p = *peers_[src];
  while (n > 0) {
    if (!p.in_body) {
      const size_t take = std::min(n, p.in_header.size() - p.in_header_bytes);
      std::memcpy(p.in_header.data() + p.in_header_bytes, bytes, take);
      p.in_header_bytes += take;
      bytes += take;
      n -= take;
      if (p.in_header_bytes < p.in_header.size()) return true;
      p.in_header_bytes = 0;
      std::string why;
      auto header = decode_header(p.in_header, &why);
      if (header && header->kind != FrameKind::data) why = "a hello after the handshake";
      if (header && header->source != src)
        why = fmt::format("frame claims to come from rank {}", header->source);
      if (!why.empty()) {
        bad_frame(src, why);
        return false;
      }
      p.in_frame = *header;
      const size_t count = p.in_frame.length / sizeof(float);
      // A large frame goes straight into the receive it will match, when that is certain.
      if (p.in_frame.length >= kDirectReadBytes)
        p.in_target = mailbox_.claim(src, p.in_frame.tag, count);
      if (!p.in_target) p.in_payload = mailbox_.take_buffer(count);
      p.in_done = 0;
      p.in_crc = 0;
      p.in_body = true;
    } else {
      const size_t take = std::min<uint64_t>(n, p.in_frame.length - p.in_done);
      uint8_t* into = body_at(p);
      std::memcpy(into, bytes, take);
      p.in_crc = crc32c(into, take, p.in_crc);
      p.in_done += take;
      bytes += take;
      n -= take;
    }
    if (p.in_body && p.in_done == p.in_frame.length && !payload_done(src)) return false;
  }
  return true;
}

uint8_t* SimNode::body_at(Peer& p) {
  if (!p.in_target && p.in_frame.length >= kDirectReadBytes) {
    // Its receive may have been posted since the header came: move there, and recycle.
    p.in_target = mailbox_.claim(p.in_frame.source, p.in_frame.tag, p.in_payload.size());
    if (p.in_target) {
      if (p.in_done > 0) std::memcpy(p.in_target->buffer.data(), p.in_payload.data(), p.in_done);
      mailbox_.give_buffer(std::move(p.in_payload));
      p.in_payload = {};
    }
  } else if (p.in_target && !mailbox_.claim_valid(*p.in_target)) {
    // The receive timed out or failed: its buffer may be gone. The rest goes to a buffer of
    // our own; the bytes read so far are lost, but their CRC is counted, and a message
    // that lost its receive this way is dropped with it.
    p.in_target.reset();
    p.in_payload = mailbox_.take_buffer(p.in_frame.length / sizeof(float));
  }
  auto* base = p.in_target ? reinterpret_cast<uint8_t*>(p.in_target->buffer.data())
                           : reinterpret_cast<uint8_t*>(p.in_payload.data());
  return base + p.in_done;
}

bool SimNode::payload_done(int src) {
  Peer& p = *peers_[src];
  p.in_body = false;
  if (p.in_crc != p.in_frame.crc32c) {
    bad_frame(src, fmt::format("payload CRC32C 0x{:08x} but the header says 0x{:08x}: "
                               "corrupt frame (tag {}, seq {}, {} bytes)",
                               p.in_crc, p.in_frame.crc32c, p.in_frame.tag, p.in_frame.seq,
                               p.in_frame.length));
    return false;
  }
  double visible_s = p.in_frame.visible_ns * 1e-9;
  if (!shared_clock_)  // the sender's delay from now, in arrival order
    visible_s = p.in_last_visible_s = std::max(clock_.now_s() + visible_s, p.in_last_visible_s);
  received_.fetch_add(1, std::memory_order_release);
  Message message{.source = src,
                  .dest = rank_,
                  .tag = p.in_frame.tag,
                  .seq = p.in_frame.seq,
                  .payload = std::move(p.in_payload),
                  .visible_net_s = visible_s,
                  .model_s = p.in_frame.model_ns * 1e-9};
  p.in_payload = {};
  if (p.in_target)
    mailbox_.deliver_claimed(std::move(message), std::exchange(p.in_target, nullptr));
  else
    mailbox_.deliver(std::move(message));
  return true;
}

// ---------------------------------------------------------------------------------------
// Failure
// ---------------------------------------------------------------------------------------

// A peer that breaks the protocol loses its connection, never the process: waits on it
// then fail with a CommError naming it and this reason.
void SimNode::bad_frame(int src, const std::string& why) {
  const std::string reason = fmt::format("bad frame from rank {}: {}", src, why);
  fmt::print(stderr, "dsgd: rank {} closed its connection to rank {}: {}\n", rank_, src, reason);
  std::fflush(stderr);
  note_refusal(fmt::format("rank {}: {}", src, why));
  drop_peer(src, reason);
}

// Shuts the connection down (the peer sees EOF) and fails every queued send to it. The fd
// itself stays open until close(), so abort() on another thread never meets a reused one.
void SimNode::drop_peer(int peer_rank, const std::string& reason) {
  Peer& peer = *peers_[peer_rank];
  if (peer.fd < 0 || peer.lost) return;
  peer.lost = true;
  ::shutdown(peer.fd, SHUT_RDWR);
  while (!peer.outbox.empty()) {
    std::shared_ptr<OpState> op = std::move(peer.outbox.front().op);
    peer.outbox.pop_front();
    frames_queued_.fetch_sub(1, std::memory_order_relaxed);
    if (op)
      mailbox_.complete(
          op, std::make_exception_ptr(CommError(
                  fmt::format("rank {}: lost rank {}: {}", rank_, peer_rank, reason), peer_rank)));
  }
  peer.in_body = false;
  peer.in_payload = {};
  peer.in_target.reset();
  if (closing_.load()) return;
  mailbox_.peer_lost(peer_rank, reason);
}

}  // namespace dsgd::sim
