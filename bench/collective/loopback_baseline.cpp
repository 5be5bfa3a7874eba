// Loopback ring baseline with plain POSIX sockets: node i writes to flow i (to node i+1)
// and reads flow i-1, non-blocking, under poll(), one thread per node, until every flow
// has carried the round's bytes.
#include "bench/collective/loopback_baseline.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/errors.h"

namespace dsgd::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::seconds kRoundDeadline{20};

[[noreturn]] void fail(const char* what) {
  throw CommError(fmt::format("loopback baseline: {} failed: {}", what, std::strerror(errno)), -1);
}

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

// One connected pair on 127.0.0.1: .first writes, .second reads.
std::pair<Fd, Fd> connected_pair() {
  Fd listener(::socket(AF_INET, SOCK_STREAM, 0));
  if (listener.get() < 0) fail("socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) fail("bind");
  if (::listen(listener.get(), 1) != 0) fail("listen");
  socklen_t len = sizeof addr;
  if (::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    fail("getsockname");
  Fd writer(::socket(AF_INET, SOCK_STREAM, 0));
  if (writer.get() < 0) fail("socket");
  if (::connect(writer.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    fail("connect");
  Fd reader(::accept(listener.get(), nullptr, nullptr));
  if (reader.get() < 0) fail("accept");
  for (int fd : {writer.get(), reader.get()}) {
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // as the simulator does
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
  return {std::move(writer), std::move(reader)};
}

}  // namespace

LoopbackRing::LoopbackRing(int flows, size_t chunk_bytes) : chunk_bytes_(chunk_bytes) {
  if (flows < 2) throw UsageError("loopback baseline: needs at least 2 nodes");
  std::vector<Fd> out(flows), in(flows);
  for (int i = 0; i < flows; ++i) {
    auto [w, r] = connected_pair();
    out[i] = std::move(w);
    in[(i + 1) % flows] = std::move(r);
  }
  for (int i = 0; i < flows; ++i) {
    out_.push_back(out[i].release());
    in_.push_back(in[i].release());
  }
}

LoopbackRing::~LoopbackRing() {
  for (int fd : out_)
    ::close(fd);
  for (int fd : in_)
    ::close(fd);
}

double LoopbackRing::round(uint64_t bytes, size_t buffer_bytes) {
  const int flows = this->flows();
  const size_t buffer = std::max(buffer_bytes, chunk_bytes_);
  // Touched now, before the start: a page's first touch is not what a round measures.
  for (auto* buffers : {&send_buffers_, &receive_buffers_}) {
    buffers->resize(flows);
    for (std::vector<char>& b : *buffers)
      if (b.size() < buffer) b.resize(buffer, 'x');
  }
  const Clock::time_point start = Clock::now() + std::chrono::microseconds(500);
  const Clock::time_point deadline = start + kRoundDeadline;
  std::vector<Clock::time_point> done(flows, start);
  std::atomic<bool> failed{false}, late{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < flows; ++i)
    threads.emplace_back([&, i] {
      char* const wbuf = send_buffers_[i].data();
      char* const rbuf = receive_buffers_[i].data();
      uint64_t written = 0, read = 0;
      while (Clock::now() < start)
        std::this_thread::yield();
      pollfd fds[2] = {{out_[i], POLLOUT, 0}, {in_[i], POLLIN, 0}};
      while ((written < bytes || read < bytes) && !failed.load(std::memory_order_relaxed)) {
        if (Clock::now() >= deadline) {
          late = true;
          break;
        }
        fds[0].events = written < bytes ? POLLOUT : 0;
        fds[1].events = read < bytes ? POLLIN : 0;
        if (::poll(fds, 2, 10) < 0 && errno != EINTR) {
          failed = true;
          break;
        }
        if (fds[0].revents & POLLOUT) {
          const size_t at = written % buffer;
          const ssize_t n = ::send(out_[i], wbuf + at,
                                   std::min<uint64_t>({chunk_bytes_, buffer - at, bytes - written}),
                                   MSG_NOSIGNAL);
          if (n > 0) written += n;
        }
        if (fds[1].revents & POLLIN) {
          const ssize_t n =
              ::recv(in_[i], rbuf + read % buffer,
                     std::min<uint64_t>({chunk_bytes_, buffer - read % buffer, bytes - read}), 0);
          if (n > 0) read += n;
        }
      }
      done[i] = Clock::now();
    });
  for (auto& t : threads)
    t.join();
  if (failed) fail("poll");
  if (late)
    throw CommError(fmt::format("loopback baseline: a round of {} bytes per flow took over {} s",
                                bytes, kRoundDeadline.count()),
                    -1);
  return std::chrono::duration<double>(*std::max_element(done.begin(), done.end()) - start).count();
}

}  // namespace dsgd::bench
