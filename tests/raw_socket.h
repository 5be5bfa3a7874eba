// Raw client sockets for tests that play a foreign or broken peer on 127.0.0.1.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dsgd::test {

// A TCP socket bound to 127.0.0.1:port (0: a port the kernel picks), with SO_REUSEADDR as
// Asio's acceptors and a late observer bind; -1 when that port cannot be bound.
inline int bound_loopback(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  const int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return fd;
  ::close(fd);
  return -1;
}

// A port nobody listens on now (the kernel's choice; free again when this returns).
inline uint16_t free_port() {
  const int fd = bound_loopback(0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  socklen_t n = sizeof a;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n) == 0);
  ::close(fd);
  return ntohs(a.sin_port);
}

// `count` consecutive ports nobody has bound now, for a server that listens on a port and the
// ones after it (dsgd-gui --classroom). Chosen below the kernel's ephemeral range, where
// client sockets' local ports do not land. ctest starts test processes with nearby pids, and
// a classroom binds its later ports only when a run starts: each process begins in a block of
// ten ports of its own, so two that run side by side do not pick overlapping ranges.
inline uint16_t free_ports(int count) {
  static unsigned next = 20000 + static_cast<unsigned>(::getpid()) % 1000 * 10;
  for (int attempt = 0; attempt < 200; ++attempt, next += static_cast<unsigned>(count)) {
    if (next + static_cast<unsigned>(count) > 30000) next = 20000;
    std::vector<int> bound;
    for (int i = 0; i < count; ++i) {
      const int fd = bound_loopback(static_cast<uint16_t>(next + static_cast<unsigned>(i)));
      if (fd < 0) break;
      bound.push_back(fd);
    }
    const bool all = static_cast<int>(bound.size()) == count;
    for (const int fd : bound)
      ::close(fd);
    if (all) return static_cast<uint16_t>(next);
  }
  FAIL("no " << count << " consecutive free ports between 20000 and 30000");
  return 0;
}

// A raw client socket connected to 127.0.0.1:port.
inline int raw_connect(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  return fd;
}

inline void raw_send(int fd, const std::vector<uint8_t>& bytes) {
  REQUIRE(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == ssize_t(bytes.size()));
}

// What the peer sends until it closes the connection; nullopt when it has not closed it
// within the limit.
inline std::optional<std::string> read_until_closed(int fd, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::string got;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{.fd = fd, .events = POLLIN};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0)
      return std::nullopt;
    char buffer[4096];
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) return got;
    got.append(buffer, static_cast<size_t>(n));
  }
}

// Bytes no dsgd peer sends: an HTTP request, padded.
inline std::vector<uint8_t> garbage() {
  std::string text = "GET / HTTP/1.1\r\nHost: dsgd\r\n\r\n";
  text.resize(64, '#');
  return {text.begin(), text.end()};
}

// True when the peer closes the connection (EOF or reset) within the limit.
inline bool closed_by_peer(int fd, std::chrono::milliseconds limit) {
  pollfd p{.fd = fd, .events = POLLIN};
  if (::poll(&p, 1, static_cast<int>(limit.count())) <= 0) return false;
  char c;
  return ::recv(fd, &c, 1, 0) <= 0;
}

}  // namespace dsgd::test
