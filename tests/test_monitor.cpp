// The observer stream (`--monitor HOST:PORT`): its wire format, and a MonitorSink that never
// holds up the run whatever its observer does (absent, late, never reading).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <deque>
#include <string>

#include "core/errors.h"
#include "core/io/monitor_wire.h"
#include "raw_socket.h"
#include "sim/monitor_sink.h"
#include "wait_until.h"

using namespace dsgd;

namespace {

// A listening socket on 127.0.0.1 at a free port: the observer the tests play.
struct Listener {
  int fd = -1;
  uint16_t port = 0;
  Listener() {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd, 4) == 0);
    socklen_t n = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n);
    port = ntohs(a.sin_port);
  }
  ~Listener() { ::close(fd); }
  // The next connection, or -1 if none comes within 10 s.
  int accept_one() const {
    pollfd p{.fd = fd, .events = POLLIN};
    return ::poll(&p, 1, 10000) == 1 ? ::accept(fd, nullptr, nullptr) : -1;
  }
};

// A listener on `port` (SO_REUSEADDR, as an observer started late would bind it).
int listen_at(uint16_t port) {
  const int fd = test::bound_loopback(port);
  REQUIRE(fd >= 0);
  REQUIRE(::listen(fd, 4) == 0);
  return fd;
}

// Everything a connection sends until it closes (at most 10 s).
std::string read_all(int fd) {
  std::string out;
  char buffer[65536];
  pollfd p{.fd = fd, .events = POLLIN};
  while (::poll(&p, 1, 10000) == 1) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  return out;
}

Event message(int rank, uint64_t seq) {
  return {.kind = EventKind::send_begin,
          .rank = rank,
          .peer = rank + 1,
          .tag = 7,
          .bytes = 400,
          .seq = seq,
          .wall_s = 0.25,
          .model_s = 0.125,
          .op = "all_reduce",
          .preview_count = 2,
          .preview = {1.5f, -2}};
}

}  // namespace

TEST_CASE("monitor lines read back as the hello, events and gaps written", "[monitor]") {
  std::deque<std::string> names;
  const MonitorRecord h = parse_monitor_line(
      monitor_hello_line({.name = "alice", .token = "t0k", .world = 4, .run_json = R"({"a":1})"}),
      names);
  CHECK(h.kind == MonitorRecord::Kind::hello);
  CHECK(h.hello.name == "alice");
  CHECK(h.hello.token == "t0k");
  CHECK(h.hello.world == 4);
  CHECK(h.hello.run_json == R"({"a":1})");
  const MonitorRecord e = parse_monitor_line(monitor_event_line(message(2, 9)), names);
  REQUIRE(e.kind == MonitorRecord::Kind::event);
  CHECK(e.event.kind == EventKind::send_begin);
  CHECK(e.event.rank == 2);
  CHECK(e.event.peer == 3);
  CHECK(e.event.tag == 7);
  CHECK(e.event.bytes == 400);
  CHECK(e.event.seq == 9);
  CHECK(e.event.wall_s == 0.25);
  CHECK(e.event.model_s == 0.125);
  CHECK(std::string(e.event.op) == "all_reduce");
  CHECK(e.event.preview_count == 2);
  CHECK(e.event.preview[1] == -2);
  CHECK(parse_monitor_line(monitor_gap_line(17), names).dropped == 17);
  for (const char* bad :
       {"", "garbage", "{}", "[1,2]", "[99,0,0,0,0,0,0,0,\"x\"]", "[0,-1,0,0,0,0,0,0,\"x\"]",
        "[0,70000,0,0,0,0,0,0,\"x\"]", R"({"dsgd_monitor":2})", "[0,\"a\",0,0,0,0,0,0,\"x\"]"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_monitor_line(bad, names), DataError);
  }
}

TEST_CASE("a monitor with no observer, or one that never reads, never holds up the run",
          "[monitor]") {
  SECTION("nobody listens") {
    sim::MonitorSink sink("127.0.0.1:" + std::to_string(test::free_port()), {}, 100);
    for (uint64_t i = 0; i < 10000; ++i)
      sink.on_event(message(0, i));
    CHECK(sink.dropped() == 10000 - 100);
    CHECK(sink.finish().find("0 events sent") != std::string::npos);
  }
  SECTION("the observer accepts and never reads") {
    Listener observer;
    sim::MonitorSink sink("127.0.0.1:" + std::to_string(observer.port), {}, 1000);
    const int fd = observer.accept_one();
    REQUIRE(fd >= 0);
    for (uint64_t i = 0; i < 500000; ++i)  // far more than the socket's buffers hold
      sink.on_event(message(0, i));
    CHECK(sink.dropped() > 0);
    const std::string said = sink.finish();  // gives up after flush_s
    CHECK(said.find("dropped") != std::string::npos);
    ::close(fd);
  }
}

TEST_CASE("an observer that comes late gets the hello, a gap, then the events", "[monitor]") {
  const uint16_t port = test::free_port();  // nobody listens there yet
  sim::MonitorSink sink("127.0.0.1:" + std::to_string(port), {.name = "bob", .world = 2}, 10);
  for (uint64_t i = 0; i < 25; ++i)
    sink.on_event(message(0, i));
  REQUIRE(sink.dropped() == 15);
  const int late = listen_at(port);  // the sink retries every half second
  pollfd p{.fd = late, .events = POLLIN};
  REQUIRE(::poll(&p, 1, 10000) == 1);
  const int fd = ::accept(late, nullptr, nullptr);
  REQUIRE(fd >= 0);
  REQUIRE(test::wait_for([&] { return sink.sent() == 10; }));
  CHECK(sink.finish().find("10 events sent, 15 dropped") != std::string::npos);
  const std::string got = read_all(fd);
  ::close(fd);
  ::close(late);
  std::deque<std::string> names;
  std::vector<MonitorRecord> lines;
  for (size_t at = 0, end; (end = got.find('\n', at)) != std::string::npos; at = end + 1)
    lines.push_back(parse_monitor_line(std::string_view(got).substr(at, end - at), names));
  REQUIRE(lines.size() == 1 + 1 + 1 + 10);
  CHECK(lines[0].kind == MonitorRecord::Kind::hello);
  CHECK(lines[0].hello.name == "bob");
  CHECK(lines[1].kind == MonitorRecord::Kind::gap);
  CHECK(lines[1].dropped == 15);
  // The sender's clock on its events' clock (their wall_s was 0.25 when they came) and the
  // round trip TCP measured on loopback.
  CHECK(lines[2].kind == MonitorRecord::Kind::clock);
  CHECK(lines[2].clock_s >= 0.25);
  CHECK(lines[2].rtt_s < 1.0);
  CHECK(lines[3].event.seq == 0);  // the queue's ten, in order
  CHECK(lines[12].event.seq == 9);
}
