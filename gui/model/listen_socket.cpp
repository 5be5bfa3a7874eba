#include "gui/model/listen_socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/errors.h"

namespace dsgd::gui {

int listen_socket(const std::string& host, const std::string& port, const std::string& what) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0)
    throw DataError(
        fmt::format("{}: {}; give an address of this machine", what, ::gai_strerror(rc)));
  int fd = ::socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC, found->ai_protocol);
  const int one = 1;
  if (fd >= 0) ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (fd < 0 || ::bind(fd, found->ai_addr, found->ai_addrlen) != 0 || ::listen(fd, 64) != 0) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    ::freeaddrinfo(found);
    throw DataError(fmt::format("{}: cannot listen there: {}; choose another port", what, why));
  }
  ::freeaddrinfo(found);
  return fd;
}

uint16_t bound_port(int fd) {
  sockaddr_storage a{};
  socklen_t n = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n);
  return ntohs(a.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&a)->sin6_port
                                       : reinterpret_cast<sockaddr_in*>(&a)->sin_port);
}

ServerSocket::ServerSocket(const std::string& host, const std::string& port,
                           const std::string& what)
    : fd_(listen_socket(host, port, what)), port_(bound_port(fd_)) {
  if (::pipe2(wake_, O_CLOEXEC) != 0) {
    ::close(fd_);
    throw DataError(fmt::format("{}: {}", what, std::strerror(errno)));
  }
}

ServerSocket::~ServerSocket() {
  ::close(fd_);
  ::close(wake_[0]);
  ::close(wake_[1]);
}

void ServerSocket::wake() {
  const char stop = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_[1], &stop, 1);
}

std::vector<std::string> machine_addresses() {
  std::vector<std::string> found;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return found;
  for (const ifaddrs* i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || (i->ifa_flags & IFF_LOOPBACK) ||
        !(i->ifa_flags & IFF_UP))
      continue;
    char text[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr, text,
                sizeof text);
    found.push_back(text);
  }
  ::freeifaddrs(list);
  return found;
}

std::string peer_host(int fd) {
  sockaddr_storage a{};
  socklen_t n = sizeof a;
  char host[NI_MAXHOST] = "?";
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&a), &n) == 0)
    ::getnameinfo(reinterpret_cast<sockaddr*>(&a), n, host, sizeof host, nullptr, 0,
                  NI_NUMERICHOST);
  return host;
}

}  // namespace dsgd::gui
