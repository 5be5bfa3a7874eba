// Loopback ring baseline with plain POSIX sockets: node i writes to flow i (to node i+1)
// and reads flow i-1, non-blocking, under poll(), until the deadline. Bytes are counted
// on the receiving side, and only inside the measured interval.
#include "cli/loopback_baseline.h"

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
#include <vector>

#include <fmt/format.h>

#include "core/errors.h"

namespace dsgd::cli {
namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void fail(const char* what) {
  throw CommError(fmt::format("loopback baseline: {} failed: {}", what, std::strerror(errno)), -1);
}

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Fd& operator=(Fd&& o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

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

LoopbackBaseline measure_loopback_ring(int flows, double seconds, size_t chunk_bytes) {
  if (flows < 2) throw UsageError("loopback baseline: needs at least 2 nodes");
  std::vector<Fd> out(flows), in(flows);  // node i writes out[i], reads in[i]
  for (int i = 0; i < flows; ++i) {
    auto [w, r] = connected_pair();
    out[i] = std::move(w);
    in[(i + 1) % flows] = std::move(r);
  }
  const Clock::time_point begin = Clock::now() + std::chrono::milliseconds(50);  // warm-up
  const Clock::time_point end =
      begin + std::chrono::nanoseconds(static_cast<int64_t>(seconds * 1e9));
  std::vector<uint64_t> received(flows, 0);  // by the reading node, i.e. on flow i-1
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < flows; ++i)
    threads.emplace_back([&, i] {
      std::vector<char> wbuf(chunk_bytes, 'x'), rbuf(chunk_bytes);
      size_t woff = 0;
      uint64_t counted = 0;
      pollfd fds[2] = {{out[i].get(), POLLOUT, 0}, {in[i].get(), POLLIN, 0}};
      // Keep going a little past the end so no writer blocks a reader that has stopped.
      const Clock::time_point stop = end + std::chrono::milliseconds(20);
      while (!failed.load(std::memory_order_relaxed)) {
        const Clock::time_point now = Clock::now();
        if (now >= stop) break;
        if (::poll(fds, 2, 10) < 0 && errno != EINTR) {
          failed = true;
          break;
        }
        if (fds[0].revents & POLLOUT) {
          const ssize_t n =
              ::send(out[i].get(), wbuf.data() + woff, chunk_bytes - woff, MSG_NOSIGNAL);
          if (n > 0) woff = (woff + n) % chunk_bytes;
        }
        if (fds[1].revents & POLLIN) {
          const ssize_t n = ::recv(in[i].get(), rbuf.data(), chunk_bytes, 0);
          const Clock::time_point t = Clock::now();
          if (n > 0 && t >= begin && t < end) counted += n;
        }
      }
      received[i] = counted;
    });
  for (auto& t : threads)
    t.join();
  if (failed) fail("poll");
  LoopbackBaseline b{.flows = flows, .seconds = seconds};
  double sum = 0, least = 0;
  for (int i = 0; i < flows; ++i) {
    const double bps = received[i] / seconds;
    sum += bps;
    least = i == 0 ? bps : std::min(least, bps);
  }
  b.mean_flow_Bps = sum / flows;
  b.min_flow_Bps = least;
  return b;
}

}  // namespace dsgd::cli
