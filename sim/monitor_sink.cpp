#include "sim/monitor_sink.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "core/errors.h"

namespace dsgd::sim {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kRetry = std::chrono::milliseconds(500);
constexpr auto kStall = std::chrono::milliseconds(100);
constexpr auto kClockEvery = std::chrono::seconds(1);

}  // namespace

MonitorSink::MonitorSink(const std::string& endpoint, MonitorHello hello, size_t capacity)
    : endpoint_(endpoint), hello_(monitor_hello_line(hello)), capacity_(capacity) {
  std::tie(host_, port_) = split_monitor_endpoint(endpoint);
  thread_ = std::thread([this] { run(); });
}

MonitorSink::~MonitorSink() {
  finish();
  thread_.join();
}

std::string MonitorSink::finish() {
  {
    std::unique_lock lock(mutex_);
    // What is queued goes out while there is an observer that reads: for at most flush_s,
    // and no longer than kStall once the observer takes nothing.
    const auto deadline = Clock::now() + std::chrono::duration<double>(flush_s);
    // A run shorter than the first try to connect still reaches an observer that listens.
    const auto flushed = [this] { return tried_ && ((queue_.empty() && !sending_) || fd_ < 0); };
    for (uint64_t before = ~uint64_t(0); !flushed() && Clock::now() < deadline;) {
      if (sent_ == before) break;  // nothing taken in the last kStall
      before = sent_;
      wake_.notify_all();
      wake_.wait_for(lock, kStall, flushed);
    }
    stopping_ = true;
    if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);  // ends a write an observer does not read
    dropped_ += queue_.size();                 // never sent
    queue_.clear();
  }
  wake_.notify_all();
  std::lock_guard lock(mutex_);
  return fmt::format("{} ({} events sent, {} dropped)", endpoint_, sent_, dropped_);
}

void MonitorSink::on_event(const Event& event) {
  std::lock_guard lock(mutex_);
  if (!epoch_)  // wall_s was read just now, on this thread
    epoch_ = Clock::now() - std::chrono::duration_cast<Clock::duration>(
                                std::chrono::duration<double>(event.wall_s));
  if (stopping_ || queue_.size() >= capacity_) {
    ++dropped_;
    ++unreported_;
    return;
  }
  queue_.push_back(event);
  wake_.notify_one();
}

uint64_t MonitorSink::dropped() const {
  std::lock_guard lock(mutex_);
  return dropped_;
}

uint64_t MonitorSink::sent() const {
  std::lock_guard lock(mutex_);
  return sent_;
}

std::unique_ptr<MonitorSink> make_monitor(const RunSpec& spec, std::string name,
                                          std::string token) {
  if (spec.outputs.monitor.empty()) return nullptr;
  if (name.empty()) {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    name = host;
  }
  return std::make_unique<MonitorSink>(spec.outputs.monitor,
                                       MonitorHello{.name = name,
                                                    .token = std::move(token),
                                                    .world = spec.cluster.nodes,
                                                    .run_json = run_spec_json(spec)});
}

bool MonitorSink::connect_once() {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host_.c_str(), port_.c_str(), &hints, &found) != 0) return false;
  int fd = -1;
  for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd >= 0 && ::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0) return false;
  std::lock_guard lock(mutex_);
  if (stopping_) {
    ::close(fd);
    return false;
  }
  fd_ = fd;
  clock_sent_ = {};  // the new observer gets the clock before the events
  return true;
}

// The connection's smoothed round trip as TCP measured it (0 before it has).
double MonitorSink::round_trip_s() const {
  tcp_info info{};
  socklen_t n = sizeof info;
  if (::getsockopt(fd_, IPPROTO_TCP, TCP_INFO, &info, &n) != 0) return 0;
  return info.tcpi_rtt * 1e-6;
}

bool MonitorSink::send_all(const std::string& bytes) {
  for (size_t at = 0; at < bytes.size();) {
    const ssize_t n = ::send(fd_, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
    if (n <= 0) return false;
    at += static_cast<size_t>(n);
  }
  return true;
}

// Connects, says hello, then sends what the queue holds in batches; after a failed write, or
// while no observer listens, tries again every kRetry (events meanwhile count as dropped once
// the queue is full).
void MonitorSink::run() {
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      if (stopping_) break;
    }
    const bool connected = connect_once();
    {
      std::lock_guard lock(mutex_);
      tried_ = true;
    }
    if (!connected) {
      std::unique_lock lock(mutex_);
      wake_.notify_all();  // a destructor waiting to flush: nobody to flush to
      wake_.wait_for(lock, kRetry, [this] { return stopping_; });
      continue;
    }
    bool ok = send_all(hello_);
    while (ok) {
      std::string batch;
      std::vector<Event> taken;  // formatted outside the lock: the ranks' on_event waits for it
      {
        std::unique_lock lock(mutex_);
        wake_.notify_all();  // the queue may be empty now: a waiting destructor goes on
        wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) break;  // stopping, all sent
        if (unreported_ > 0) batch = monitor_gap_line(std::exchange(unreported_, 0));
        if (epoch_ && Clock::now() - clock_sent_ >= kClockEvery) {
          clock_sent_ = Clock::now();
          batch += monitor_clock_line(std::chrono::duration<double>(clock_sent_ - *epoch_).count(),
                                      round_trip_s());
        }
        const size_t n = std::min<size_t>(queue_.size(), 4096);
        taken.assign(queue_.begin(), queue_.begin() + n);
        queue_.erase(queue_.begin(), queue_.begin() + n);
        sent_ += n;
        sending_ = true;
      }
      for (const Event& e : taken)
        append_monitor_event(batch, e);
      ok = send_all(batch);
      std::lock_guard lock(mutex_);
      sending_ = false;
    }
    std::lock_guard lock(mutex_);
    ::close(fd_);
    fd_ = -1;
    if (stopping_) break;
  }
  wake_.notify_all();
}

}  // namespace dsgd::sim
