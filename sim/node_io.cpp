// SimNode's progress engine: the rank thread's poll over its peers' connections, reading
// frames into the Mailbox and writing queued ones. Every function here runs on the rank thread,
// except wake().
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <utility>

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
  take_incoming();
  send_matches();  // made by another thread (the step gate) since the last pump
  poll_links(until);
  send_matches();  // made by the frames just read
}

// One poll over the wake-up eventfd and every link of every peer not lost, then what it
// found: connects finished, queued frames written, frames read.
void SimNode::poll_links(Clock::time_point until) {
  std::vector<pollfd>& fds = poll_fds_;
  fds.clear();
  poll_links_.clear();
  fds.push_back({.fd = wake_fd_, .events = POLLIN, .revents = 0});
  for (int p : linked_) {
    const Peer& peer = *peers_[p];
    if (peer.lost) continue;
    for (int k = 0; k < peer.link_count; ++k) {
      const Link& link = peer.links[k];
      short events = link.connecting ? POLLOUT : POLLIN;
      if (k == 0 && !link.connecting && !peer.outbox.empty()) events |= POLLOUT;
      fds.push_back({.fd = link.fd, .events = events, .revents = 0});
      poll_links_.emplace_back(p, k);
    }
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
    const short revents = fds[i].revents;
    const auto [p, k] = poll_links_[i - 1];
    Peer& peer = *peers_[p];
    if (!revents || peer.lost) continue;  // lost: by a link handled before this one
    Link& link = peer.links[k];
    if (link.connecting) {
      finish_connect(p);
      if (peer.lost) continue;
    }
    if (revents & POLLOUT) write_peer(p);
    if (revents & (POLLIN | POLLHUP | POLLERR)) read_link(p, link);
  }
}

// ---------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------

// Hands the kernel as much of the queue as it takes, several frames per system call.
void SimNode::write_peer(int dst) {
  Peer& p = *peers_[dst];
  if (p.link_count == 0 || p.links[0].connecting) return;  // the pump writes once it is made
  const int fd = p.links[0].fd;
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
    ssize_t n = ::sendmsg(fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
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

void SimNode::read_link(int src, Link& link) {
  read_available(src, link);
  set_low_water(link);
}

void SimNode::read_available(int src, Link& l) {
  const Peer& p = *peers_[src];
  size_t budget = kReadBudgetBytes;
  while (!p.lost && budget > 0) {
    const uint64_t body_left = l.in_body ? l.in_frame.length - l.in_done : 0;
    const bool direct = body_left >= kDirectReadBytes;
    uint8_t* into = direct ? body_at(l) : stage_.data();
    const size_t want = direct ? std::min<uint64_t>(body_left, kReadChunkBytes) : stage_.size();
    const ssize_t n = ::recv(l.fd, into, want, MSG_DONTWAIT);
    if (n == 0) return peer_closed(src, l);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (would_block(errno)) return;
      return drop_peer(src, fmt::format("connection lost: {}", std::strerror(errno)));
    }
    budget -= std::min<size_t>(budget, n);
    if (direct) {
      if (checksums_) l.in_crc = crc32c(into, n, l.in_crc);
      l.in_done += n;
      if (l.in_done == l.in_frame.length && !payload_done(src, l)) return;
    } else if (!consume(src, l, into, n)) {
      return;
    }
    if (static_cast<size_t>(n) < want) return;  // drained: poll says when more comes
  }
}

// While a large payload comes in, poll wakes this thread only when a whole read's worth has
// arrived (or the rest of the payload), not for every segment the sender's kernel queued.
void SimNode::set_low_water(Link& l) {
  if (l.fd < 0) return;
  const uint64_t body_left = l.in_body ? l.in_frame.length - l.in_done : 0;
  const int want = body_left >= kDirectReadBytes
                       ? static_cast<int>(std::min<uint64_t>(body_left, kReadChunkBytes))
                       : 1;
  if (want == l.rcvlowat) return;
  if (::setsockopt(l.fd, SOL_SOCKET, SO_RCVLOWAT, &want, sizeof want) == 0) l.rcvlowat = want;
}

// Parses bytes read through the staging buffer: completes headers and payloads, delivering
// each whole frame. Nothing stays in the buffer: a partial header is kept in the link.
bool SimNode::consume(int src, Link& l, const uint8_t* bytes, size_t n) {
  while (n > 0) {
    if (!l.in_body) {
      const size_t take = std::min(n, l.in_header.size() - l.in_header_bytes);
      std::memcpy(l.in_header.data() + l.in_header_bytes, bytes, take);
      l.in_header_bytes += take;
      bytes += take;
      n -= take;
      if (l.in_header_bytes < l.in_header.size()) return true;
      l.in_header_bytes = 0;
      std::string why;
      auto header = decode_header(l.in_header, &why);
      if (header && header->kind == FrameKind::hello) why = "a hello after the handshake";
      if (header && header->source != src)
        why = fmt::format("frame claims to come from rank {}", header->source);
      if (!why.empty()) {
        bad_frame(src, why);
        return false;
      }
      if (header->kind == FrameKind::matched) {
        if (!take_match(src, *header)) return false;
        continue;
      }
      l.in_frame = *header;
      const size_t count = l.in_frame.length / sizeof(float);
      // A large frame goes straight into the receive it will match, when that is certain.
      if (l.in_frame.length >= kDirectReadBytes)
        l.in_target = mailbox_.claim(src, l.in_frame.tag, count);
      if (!l.in_target) l.in_payload = mailbox_.take_buffer(count);
      l.in_done = 0;
      l.in_crc = 0;
      l.in_body = true;
    } else {
      const size_t take = std::min<uint64_t>(n, l.in_frame.length - l.in_done);
      uint8_t* into = body_at(l);
      std::memcpy(into, bytes, take);
      if (checksums_) l.in_crc = crc32c(into, take, l.in_crc);
      l.in_done += take;
      bytes += take;
      n -= take;
    }
    if (l.in_body && l.in_done == l.in_frame.length && !payload_done(src, l)) return false;
  }
  return true;
}

uint8_t* SimNode::body_at(Link& l) {
  if (!l.in_target && l.in_frame.length >= kDirectReadBytes) {
    // Its receive may have been posted since the header came: move there, and recycle.
    l.in_target = mailbox_.claim(l.in_frame.source, l.in_frame.tag, l.in_payload.size());
    if (l.in_target) {
      if (l.in_done > 0) std::memcpy(l.in_target->buffer.data(), l.in_payload.data(), l.in_done);
      mailbox_.give_buffer(std::move(l.in_payload));
      l.in_payload = {};
    }
  } else if (l.in_target && !mailbox_.claim_valid(*l.in_target)) {
    // The receive timed out or failed: its buffer may be gone. The rest goes to a buffer of
    // our own; the bytes read so far are lost, but their CRC is counted, and a message
    // that lost its receive this way is dropped with it.
    l.in_target.reset();
    l.in_payload = mailbox_.take_buffer(l.in_frame.length / sizeof(float));
  }
  auto* base = l.in_target ? reinterpret_cast<uint8_t*>(l.in_target->buffer.data())
                           : reinterpret_cast<uint8_t*>(l.in_payload.data());
  return base + l.in_done;
}

bool SimNode::payload_done(int src, Link& l) {
  Peer& peer = *peers_[src];
  l.in_body = false;
  if (checksums_ && l.in_crc != l.in_frame.crc32c) {
    bad_frame(src, fmt::format("payload CRC32C 0x{:08x} but the header says 0x{:08x}: "
                               "corrupt frame (tag {}, seq {}, {} bytes)",
                               l.in_crc, l.in_frame.crc32c, l.in_frame.tag, l.in_frame.seq,
                               l.in_frame.length));
    return false;
  }
  if (l.in_frame.kind == FrameKind::farewell) {
    if (!l.in_payload.empty()) {
      const auto* text = reinterpret_cast<const char*>(l.in_payload.data());
      peer.farewell.assign(text, strnlen(text, l.in_frame.length));
    }
    l.in_payload = {};
    return true;
  }
  double visible_s = l.in_frame.visible_ns * 1e-9;
  if (!shared_clock_)  // the sender's delay from now, in arrival order
    visible_s = peer.in_last_visible_s =
        std::max(clock_.now_s() + visible_s, peer.in_last_visible_s);
  received_.fetch_add(1, std::memory_order_release);
  Message message{.source = src,
                  .dest = rank_,
                  .tag = l.in_frame.tag,
                  .seq = l.in_frame.seq,
                  .payload = std::move(l.in_payload),
                  .visible_net_s = visible_s,
                  .model_s = l.in_frame.model_ns * 1e-9,
                  .sync = l.in_frame.kind == FrameKind::data_sync};
  l.in_payload = {};
  if (l.in_target)
    mailbox_.deliver_claimed(std::move(message), std::exchange(l.in_target, nullptr));
  else
    mailbox_.deliver(std::move(message));
  return true;
}

// The peer matched our message `header.seq`, sent above the eager limit: its send is done.
bool SimNode::take_match(int src, const FrameHeader& header) {
  auto& waiting = peers_[src]->awaiting_match;
  auto it = std::find_if(waiting.begin(), waiting.end(),
                         [&](const auto& w) { return w.first == header.seq; });
  if (it == waiting.end()) {
    bad_frame(src, fmt::format("it matched message {} (tag {}), which no send of ours awaits",
                               header.seq, header.tag));
    return false;
  }
  std::shared_ptr<OpState> op = std::move(it->second);
  waiting.erase(it);
  matches_received_.fetch_add(1, std::memory_order_release);
  op->model_s = header.model_ns * 1e-9;  // read by this thread only, once it is done
  mailbox_.complete(op);
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
  refusals_.add(fmt::format("rank {}: {}", src, why));
  drop_peer(src, reason);
}

void SimNode::peer_closed(int src, Link& closed) {
  Peer& p = *peers_[src];
  if (!std::exchange(p.closing, true))  // two processes that dialled each other: two links
    for (int k = 0; k < p.link_count; ++k)
      if (&p.links[k] != &closed && p.links[k].fd >= 0) read_available(src, p.links[k]);
  drop_peer(src, p.farewell.empty() ? "rank closed its connection"
                                    : fmt::format("it left the run after this: {}", p.farewell));
}

// Shuts the peer's connections down (it sees EOF) and fails every queued send to it. The
// fds themselves stay open until close(), so abort() on another thread never meets a
// reused one. A peer never connected is lost all the same: nothing will be sent to it.
void SimNode::drop_peer(int peer_rank, const std::string& reason) {
  Peer& peer = *peers_[peer_rank];
  if (peer.lost || peer_rank == rank_) return;
  peer.lost = true;
  for (int k = 0; k < peer.link_count; ++k) {
    Link& link = peer.links[k];
    ::shutdown(link.fd, SHUT_RDWR);
    link.in_body = false;
    link.in_payload = {};
    link.in_target.reset();
  }
  const auto lost = [&] {
    return std::make_exception_ptr(
        CommError(fmt::format("rank {}: lost rank {}: {}", rank_, peer_rank, reason), peer_rank));
  };
  while (!peer.outbox.empty()) {
    std::shared_ptr<OpState> op = std::move(peer.outbox.front().op);
    peer.outbox.pop_front();
    frames_queued_.fetch_sub(1, std::memory_order_relaxed);
    if (op) mailbox_.complete(op, lost());
  }
  for (auto& [seq, op] : std::exchange(peer.awaiting_match, {}))
    mailbox_.complete(op, lost());
  if (closing_.load()) return;
  mailbox_.peer_lost(peer_rank, reason);
}

}  // namespace dsgd::sim
