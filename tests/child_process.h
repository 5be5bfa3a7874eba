// Runs a test's body in a child process of its own, for what can happen once per process
// (SimGrid's engine starts once): the body's result comes back through a pipe.
#pragma once

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <iostream>
#include <string>

namespace dsgd::test {

// Runs `body` in a child process and returns what it returned, or "error: " and what it
// threw. The child writes through a pipe and exits; the parent waits for it.
inline std::string in_child(const std::function<std::string()>& body) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  std::fflush(nullptr);  // what the parent printed is not printed again by the child
  std::cout.flush();
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    std::string out;
    try {
      out = body();
    } catch (const std::exception& e) {
      out = std::string("error: ") + e.what();
    }
    for (size_t done = 0; done < out.size();) {
      const ssize_t n = write(fds[1], out.data() + done, out.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;)
    out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  INFO(out);
  REQUIRE(WIFEXITED(status));
  return out;
}

}  // namespace dsgd::test
