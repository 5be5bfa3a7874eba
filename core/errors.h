// Typed errors thrown by dsgd libraries. Each says what was wrong, where, and what to do.
// Only main() turns them into exit codes (kExitUsage for bad usage or input,
// kExitComm for a lost peer or a passed deadline, 1 for anything else).
#pragma once

#include <stdexcept>
#include <string>

namespace dsgd {

inline constexpr int kExitOk = 0;
inline constexpr int kExitOther = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitComm = 3;

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  virtual int exit_code() const { return kExitOther; }
};

// Bad command-line usage or configuration value.
class UsageError : public Error {
 public:
  using Error::Error;
  int exit_code() const override { return kExitUsage; }
};

// Bad input data: a file that is missing, unreadable, malformed or inconsistent.
class DataError : public Error {
 public:
  using Error::Error;
  int exit_code() const override { return kExitUsage; }
};

// A communication failure involving `peer` (or -1 when no single peer is to blame).
class CommError : public Error {
 public:
  CommError(const std::string& what, int peer) : Error(what), peer_(peer) {}
  int peer() const { return peer_; }
  int exit_code() const override { return kExitComm; }

 private:
  int peer_;
};

// A blocking call whose deadline passed before it could complete.
class TimeoutError : public CommError {
 public:
  using CommError::CommError;
};

// Every live rank is blocked and nothing is in flight: nobody can ever proceed. The
// message names the wait-for cycle ("rank 0 waits in recv from rank 1, tag 0; ...").
class DeadlockError : public CommError {
 public:
  explicit DeadlockError(const std::string& what) : CommError(what, -1) {}
};

// An error that one process of a job (rank 0) has printed for all of them: every process
// exits with its code, and the others print nothing, so the user reads it once.
class ReportedByRankZero : public Error {
 public:
  explicit ReportedByRankZero(int exit_code) : Error("reported by rank 0"), code_(exit_code) {}
  int exit_code() const override { return code_; }

 private:
  int code_;
};

}  // namespace dsgd
