#include "core/mpi/watchdog.h"

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "core/errors.h"

namespace dsgd::mpi {

Watchdog::Watchdog(std::string who) : who_(std::move(who)), thread_([this] { run(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  thread_.join();
}

void Watchdog::arm(const char* call, size_t bytes, Clock::time_point deadline,
                   std::chrono::milliseconds timeout) {
  std::lock_guard lock(mutex_);
  call_ = call;
  bytes_ = bytes;
  deadline_ = deadline;
  timeout_ = timeout;
}

void Watchdog::disarm() {
  std::lock_guard lock(mutex_);
  call_ = nullptr;
}

void Watchdog::run() {
  // Polls rather than being woken by arm(): arming then costs one uncontended lock, which
  // keeps the native collectives as fast as bare MPI calls (bench/mpi measures it).
  std::unique_lock lock(mutex_);
  while (!stop_) {
    stop_cv_.wait_for(lock, std::chrono::milliseconds(20));
    if (stop_ || !call_ || Clock::now() < deadline_) continue;
    // The rank's thread is blocked inside MPI and no MPI call can unblock it; the only
    // way out is to end the process. mpirun sees the exit code and stops the other ranks.
    fmt::print(stderr,
               "dsgd: error: {}: {} ({} bytes) passed its deadline ({:g} s timeout): another "
               "rank is stuck or lost, or the ranks called different collectives; a blocking "
               "MPI call cannot be cancelled, so this rank exits\n",
               who_, call_, bytes_, std::chrono::duration<double>(timeout_).count());
    std::fflush(stderr);
    std::_Exit(kExitComm);
  }
}

}  // namespace dsgd::mpi
