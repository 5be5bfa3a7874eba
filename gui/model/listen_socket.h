// The window's servers (the watch, the classroom): a listening TCP socket with the errors a
// user can act on, and the pipe that tells the server's thread to stop.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace dsgd::gui {

// How long a connection to one of the window's servers may take to say who it is (a
// watched run's hello, a student's join): a program that connects and says nothing would
// otherwise hold its descriptor for as long as the window runs.
inline constexpr std::chrono::milliseconds kGreetWithin{10000};

// Listens on HOST:PORT (port "0": any free one) and returns the socket. DataError naming
// `what` (the flag, as the user gave it) when it cannot: no such address here, the port
// taken.
int listen_socket(const std::string& host, const std::string& port, const std::string& what);
uint16_t bound_port(int fd);

// A listening socket and a wake pipe: the server's thread polls both (and its connections)
// and returns once wake() made the pipe readable.
class ServerSocket {
 public:
  ServerSocket(const std::string& host, const std::string& port, const std::string& what);
  ~ServerSocket();
  ServerSocket(const ServerSocket&) = delete;
  ServerSocket& operator=(const ServerSocket&) = delete;
  int fd() const { return fd_; }
  uint16_t port() const { return port_; }
  int wake_fd() const { return wake_[0]; }  // readable once wake() was called
  void wake();

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
  int wake_[2] = {-1, -1};
};
// This machine's IPv4 addresses other machines can reach it on (every interface's but
// loopback), for telling students where to connect.
std::vector<std::string> machine_addresses();
// The numeric address of the peer of an accepted socket: "10.0.0.5".
std::string peer_host(int fd);

}  // namespace dsgd::gui
