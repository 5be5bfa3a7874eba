#include "gui/model/watch.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/io/monitor_wire.h"
#include "gui/model/listen_socket.h"

namespace dsgd::gui {

struct Watch::Sender {
  int fd = -1;
  Clock::time_point accepted;
  std::string peer;     // "127.0.0.1:41234"
  std::string pending;  // bytes after the last whole line
  bool greeted = false;
  std::string name;  // as its hello gave it (its address when it gave none)
  // Its events' wall_s + offset_s = seconds on this watch's clock, from its clock record
  // of the shortest round trip so far (unknown before one came: times left as sent).
  std::optional<double> offset_s;
  double rtt_s = 0;
};

namespace {

// HOST:PORT or PORT (on 127.0.0.1).
std::pair<std::string, std::string> split_endpoint(const std::string& endpoint) {
  const size_t colon = endpoint.rfind(':');
  std::string host = colon == std::string::npos ? "127.0.0.1" : endpoint.substr(0, colon);
  std::string port = colon == std::string::npos ? endpoint : endpoint.substr(colon + 1);
  if (host.empty() || !parse_port(port))
    throw UsageError(
        fmt::format("--watch {}: give the port to listen on, PORT or HOST:PORT (e.g. 29600, or "
                    "0.0.0.0:29600 for other machines)",
                    endpoint));
  return {host, port};
}

ServerSocket listening_at(const std::string& endpoint) {
  const auto [host, port] = split_endpoint(endpoint);
  return ServerSocket(host, port, "--watch " + endpoint);
}

}  // namespace

Watch::Watch(const std::string& endpoint, std::string token, std::chrono::milliseconds hello_within)
    : endpoint_(endpoint),
      token_(std::move(token)),
      hello_within_(hello_within),
      server_(listening_at(endpoint)) {
  thread_ = std::thread([this] { run(); });
}

Watch::~Watch() {
  server_.wake();
  thread_.join();
  for (Sender* s : senders_) {
    ::close(s->fd);
    delete s;
  }
}

WatchState Watch::state() const {
  std::lock_guard lock(mutex_);
  return state_;
}

// Polls the listening socket, the wake pipe and every sender until the pipe says stop.
void Watch::run() {
  for (;;) {
    std::vector<pollfd> fds{{server_.wake_fd(), POLLIN, 0}, {server_.fd(), POLLIN, 0}};
    for (const Sender* s : senders_)
      fds.push_back({s->fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), 1000) < 0 && errno != EINTR) return;
    if (fds[0].revents) return;
    if (fds[1].revents & POLLIN) accept_one();
    std::vector<Sender*> keep;
    for (size_t i = 0; i < fds.size() - 2; ++i) {
      Sender* s = senders_[i];
      if ((!fds[i + 2].revents || read_from(*s)) && !silent_too_long(*s)) {
        keep.push_back(s);
        continue;
      }
      ::close(s->fd);
      std::lock_guard lock(mutex_);
      if (s->greeted) --state_.connected;
      delete s;
    }
    for (size_t i = fds.size() - 2; i < senders_.size(); ++i)  // accepted in this round
      keep.push_back(senders_[i]);
    senders_ = std::move(keep);
  }
}

bool Watch::silent_too_long(Sender& s) {
  if (s.greeted || Clock::now() - s.accepted < hello_within_) return false;
  refuse(s,
         fmt::format("no hello within {} s", std::chrono::duration<double>(hello_within_).count()));
  return true;
}

void Watch::accept_one() {
  sockaddr_storage a{};
  socklen_t n = sizeof a;
  const int fd = ::accept4(server_.fd(), reinterpret_cast<sockaddr*>(&a), &n, SOCK_CLOEXEC);
  if (fd < 0) return;
  char host[NI_MAXHOST] = "?", port[NI_MAXSERV] = "?";
  ::getnameinfo(reinterpret_cast<sockaddr*>(&a), n, host, sizeof host, port, sizeof port,
                NI_NUMERICHOST | NI_NUMERICSERV);
  senders_.push_back(
      new Sender{.fd = fd, .accepted = Clock::now(), .peer = fmt::format("{}:{}", host, port)});
}

bool Watch::read_from(Sender& s) {
  char buffer[65536];
  const ssize_t n = ::recv(s.fd, buffer, sizeof buffer, 0);
  if (n <= 0) return false;
  s.pending.append(buffer, static_cast<size_t>(n));
  size_t start = 0;
  for (size_t end; (end = s.pending.find('\n', start)) != std::string::npos; start = end + 1) {
    try {
      take_line(s, std::string_view(s.pending).substr(start, end - start));
    } catch (const DataError& e) {
      refuse(s, e.what());
      return false;
    }
  }
  s.pending.erase(0, start);
  if (s.pending.size() > kMaxMonitorLine) {
    refuse(s, fmt::format("a line longer than {} bytes", kMaxMonitorLine));
    return false;
  }
  return true;
}

void Watch::take_line(Sender& s, std::string_view line) {
  std::lock_guard lock(mutex_);
  const MonitorRecord r = parse_monitor_line(line, names_);
  if (!s.greeted) {
    if (r.kind != MonitorRecord::Kind::hello) throw DataError("it did not begin with a hello");
    if (!token_.empty() && r.hello.token != token_) throw DataError("wrong job token");
    s.greeted = true;
    ++state_.connected;
    s.name = r.hello.name.empty() ? s.peer : r.hello.name;
    state_.senders.push_back(s.name);
    state_.world = std::max(state_.world, r.hello.world);
    if (state_.run_json.empty()) state_.run_json = r.hello.run_json;
    return;
  }
  if (r.kind == MonitorRecord::Kind::gap) state_.dropped += r.dropped;
  if (r.kind == MonitorRecord::Kind::clock && (!s.offset_s || r.rtt_s <= s.rtt_s)) {
    const double now = std::chrono::duration<double>(Clock::now() - started_).count();
    s.offset_s = now - (r.clock_s + r.rtt_s / 2);
    s.rtt_s = r.rtt_s;
  }
  if (r.kind != MonitorRecord::Kind::event) return;
  if (state_.events.size() >= kCapacity) {  // the older half goes
    const size_t half = state_.events.size() / 2;
    state_.events.erase(state_.events.begin(), state_.events.begin() + half);
    state_.dropped += half;
  }
  state_.model_time = state_.model_time && r.event.model_s >= 0;
  Event e = r.event;
  if (s.offset_s) e.wall_s += *s.offset_s;
  const size_t rank = static_cast<size_t>(r.event.rank);
  if (state_.rank_names.size() <= rank) state_.rank_names.resize(rank + 1);
  if (state_.rank_names[rank].empty()) state_.rank_names[rank] = s.name;
  state_.events.push_back(e);
}

void Watch::refuse(Sender& s, const std::string& why) {
  std::lock_guard lock(mutex_);
  ++state_.refused;
  state_.last_refusal = fmt::format("{}: {}", s.peer, why);
}

}  // namespace dsgd::gui
