#include "sim/classroom_client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <thread>

#include <fmt/format.h>

#include "core/errors.h"

namespace dsgd::sim {

namespace {

constexpr auto kRetry = std::chrono::milliseconds(500);
constexpr auto kConnectLimit = std::chrono::milliseconds(3000);

std::string where(const boost::asio::ip::tcp::endpoint& e) {
  return fmt::format("{}:{}", e.address().to_string(), e.port());
}

// A connected socket, or -1 while nothing listens there (or nothing answered within
// `limit`: a firewall that drops what it refuses would otherwise hold connect() for minutes).
int connect_once(const boost::asio::ip::tcp::endpoint& teacher, std::chrono::milliseconds limit) {
  const int fd =
      ::socket(teacher.protocol().family(), SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  int error = 0;
  socklen_t n = sizeof error;
  pollfd p{fd, POLLOUT, 0};
  const bool connected =
      ::connect(fd, teacher.data(), static_cast<socklen_t>(teacher.size())) == 0 ||
      (errno == EINPROGRESS && ::poll(&p, 1, static_cast<int>(limit.count())) == 1 &&
       ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &n) == 0 && error == 0);
  if (connected && ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK) == 0) return fd;
  ::close(fd);
  return -1;
}

std::string local_address_of(int fd) {
  sockaddr_in a{};
  socklen_t n = sizeof a;
  char text[INET_ADDRSTRLEN] = "127.0.0.1";
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n) == 0 && a.sin_family == AF_INET)
    ::inet_ntop(AF_INET, &a.sin_addr, text, sizeof text);
  return text;
}

int millis_until(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::clamp<int64_t>(left.count(), 0, 1000));
}

}  // namespace

ClassroomClient::ClassroomClient(const boost::asio::ip::tcp::endpoint& teacher,
                                 const ClassroomJoin& join, Clock::time_point deadline)
    : teacher_(teacher) {
  while ((fd_ = connect_once(teacher, kConnectLimit)) < 0) {
    if (Clock::now() + kRetry > deadline)
      throw TimeoutError(fmt::format("no classroom answered at {} (is the teacher's dsgd-gui "
                                     "--classroom running, and its port open?)",
                                     where(teacher)),
                         -1);
    std::this_thread::sleep_for(kRetry);
  }
  local_ = local_address_of(fd_);
  const std::string line = classroom_join_line(join);
  if (::send(fd_, line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size())) {
    ::close(fd_);
    throw CommError(fmt::format("the classroom at {} closed the connection", where(teacher)), -1);
  }
  const std::optional<ClassroomMessage> m = read_message(deadline);
  if (m && m->welcome) {
    seat_ = *m->welcome;
    return;
  }
  ::close(fd_);
  if (m && m->refused)
    throw CommError(
        fmt::format("the classroom at {} refused this node: {}", where(teacher), *m->refused), -1);
  throw CommError(fmt::format("the classroom at {} did not welcome this node", where(teacher)), -1);
}

ClassroomClient::~ClassroomClient() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<ClassroomMessage> ClassroomClient::read_message(Clock::time_point deadline,
                                                              bool must) {
  while (!closed_) {
    if (const size_t end = pending_.find('\n'); end != std::string::npos) {
      const std::string line = pending_.substr(0, end);
      pending_.erase(0, end + 1);
      return parse_classroom_line(line);
    }
    if (pending_.size() > kMaxClassroomLine)
      throw DataError(fmt::format("the classroom at {} sent a line longer than {} bytes",
                                  where(teacher_), kMaxClassroomLine));
    if (Clock::now() >= deadline) {
      if (!must) return std::nullopt;
      throw TimeoutError(
          fmt::format("the classroom at {} said nothing by the deadline", where(teacher_)), -1);
    }
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, millis_until(deadline));
    if (ready < 0 && errno != EINTR) closed_ = true;
    if (ready <= 0) continue;
    char buffer[16384];
    const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
    if (n <= 0) closed_ = true;
    if (n > 0) pending_.append(buffer, static_cast<size_t>(n));
  }
  return std::nullopt;
}

std::optional<ClassroomStart> ClassroomClient::next_run(Clock::time_point deadline) {
  for (;;) {
    const std::optional<ClassroomMessage> m = read_message(deadline);
    if (!m || m->end) return std::nullopt;
    if (m->start) return m->start;
  }
}

void ClassroomClient::done(const ClassroomDone& done) {
  send(classroom_done_line(done));
}

void ClassroomClient::send(const std::string& line) {
  std::lock_guard lock(send_mutex_);
  [[maybe_unused]] const ssize_t n = ::send(fd_, line.data(), line.size(), MSG_NOSIGNAL);
}

std::optional<ClassroomMessage> ClassroomClient::poll(Clock::time_point until) {
  std::optional<ClassroomMessage> m = read_message(until, false);
  if (m && m->end) closed_ = true;
  return closed_ ? std::nullopt : m;
}

}  // namespace dsgd::sim
