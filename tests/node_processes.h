// dsgd node processes for tests: a `dsgd` process in the background, the node flags, a
// free port, and the `dsgd train` run that node processes must reproduce, parameter for
// parameter. Shared by the tests of plain and elastic runs of processes.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "cli_runner.h"
#include "raw_socket.h"
#include "core/io/npz.h"

namespace dsgd::test {

using namespace std::chrono_literals;

// Small and quick: 20 steps of an MLP on 512 synthetic samples, batches in file order.
constexpr const char* kTrainFlags =
    "--model mlp:16 --data synthetic:train=512,test=128,features=8,classes=4 --batch 48 "
    "--steps 20 --no-shuffle --seed 5 -q";

// A `dsgd` process in the background, stdout and stderr to files; killed if still running
// when it goes away.
class Process {
 public:
  Process(const std::string& args, const std::string& log_prefix)
      : out_(log_prefix + ".out"), err_(log_prefix + ".err") {
    const std::string cmd =
        fmt::format("exec {} {} >{} 2>{} </dev/null", DSGD_BINARY, args, out_, err_);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    REQUIRE(pid_ > 0);
  }
  ~Process() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  // The exit code, or -1 if it still runs after `limit` (it is then killed).
  int wait(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (pid_ > 0) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      if (std::chrono::steady_clock::now() > deadline) break;
      std::this_thread::sleep_for(20ms);
    }
    return -1;
  }
  // Kills it at once (SIGKILL), as a machine's sudden end would.
  void kill() {
    if (pid_ > 0) ::kill(pid_, SIGKILL);
  }
  std::string out() const { return read_text(out_); }
  std::string err() const { return read_text(err_); }
  // Waits until stderr contains `text`; returns stderr then (or "" at the limit).
  std::string await_err(const std::string& text, std::chrono::milliseconds limit) const {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      std::string e = err();
      if (e.find(text) != std::string::npos) return e;
      std::this_thread::sleep_for(20ms);
    }
    return "";
  }

 private:
  std::string out_, err_;
  pid_t pid_ = -1;
};

inline std::string node_args(int rank, int world, uint16_t port, const std::string& extra = "") {
  return fmt::format("node --rank {} --world {} --rendezvous 127.0.0.1:{} --token sesame {} {}",
                     rank, world, port, kTrainFlags, extra);
}

// The port in "dsgd node: rank R of N accepts peers on 127.0.0.1:PORT".
inline uint16_t accept_port(const std::string& err) {
  const std::string key = "accepts peers on 127.0.0.1:";
  const auto at = err.find(key);
  REQUIRE(at != std::string::npos);
  return static_cast<uint16_t>(std::stoi(err.substr(at + key.size())));
}

// `dsgd train --nodes N` with the same flags: what the processes must reproduce.
struct Reference {
  std::vector<NamedTensor> params;
  std::string out;
};
inline Reference reference(const TempDir& dir, const std::string& extra = "", int nodes = 3) {
  const auto r = dsgd::test::run_dsgd(
      fmt::format("train --nodes {} {} {} --save {}", nodes, kTrainFlags, extra, dir / "ref.npz"));
  REQUIRE(r.exit_code == 0);
  return {read_npz(dir / "ref.npz"), r.out};
}

// A number printed after `label` in a summary ("model time       0.044 s").
inline double summary_value(const std::string& out, const std::string& label) {
  const auto at = out.find(label);
  REQUIRE(at != std::string::npos);
  return std::stod(out.substr(at + label.size()));
}

inline void require_same_params(const std::vector<NamedTensor>& got,
                                const std::vector<NamedTensor>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO(want[i].name);
    REQUIRE(got[i].name == want[i].name);
    REQUIRE(got[i].tensor.numel() == want[i].tensor.numel());
    for (int64_t j = 0; j < want[i].tensor.numel(); ++j) {
      const float a = got[i].tensor.data()[j], b = want[i].tensor.data()[j];
      REQUIRE(std::abs(a - b) <= 1e-6f + 1e-5f * std::abs(b));
    }
  }
}

}  // namespace dsgd::test
