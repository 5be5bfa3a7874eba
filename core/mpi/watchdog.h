// Watchdog: the deadline of blocking MPI calls that MPI cannot interrupt (MPI_Allreduce,
// MPI_Bcast, ... in the native collectives). A thread of its own checks every 20 ms
// whether the armed call has outlived its deadline; if so it prints which call on which
// rank was stuck and ends the process with exit code 3, after which mpirun stops the job.
// It cannot name the peer: a blocked MPI collective does not say whom it waits for.
// Not a timer service: one call is armed at a time (a rank makes one MPI call at a time).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>

#include "core/comm/communicator.h"

namespace dsgd::mpi {

class Watchdog {
 public:
  // `who` starts every message: "rank 0 (host node1)".
  explicit Watchdog(std::string who);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // `call` is a static string ("MPI_Allreduce"); `timeout` is only quoted in the message.
  void arm(const char* call, size_t bytes, Clock::time_point deadline,
           std::chrono::milliseconds timeout);
  void disarm();

  // Arms for one scope.
  class Scope {
   public:
    Scope(Watchdog& dog, const char* call, size_t bytes, Clock::time_point deadline,
          std::chrono::milliseconds timeout)
        : dog_(dog) {
      dog_.arm(call, bytes, deadline, timeout);
    }
    ~Scope() { dog_.disarm(); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Watchdog& dog_;
  };

 private:
  void run();

  const std::string who_;
  std::mutex mutex_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  // Guarded by mutex_: the armed call, if any.
  const char* call_ = nullptr;
  size_t bytes_ = 0;
  Clock::time_point deadline_{};
  std::chrono::milliseconds timeout_{0};
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace dsgd::mpi
