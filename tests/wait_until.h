// wait_until: polls a condition until it holds or a deadline passes, for tests that wait
// for what another thread or process does. Tests wait for a condition, never sleep and then
// assert; a deadline turns a hang into a failed check. Not a scheduler: the short sleep
// between polls only paces the loop.
#pragma once

#include <chrono>
#include <thread>

namespace dsgd::test {

// True once `done()` holds; false if it still does not at `deadline`.
template <typename Predicate>
bool wait_until(Predicate&& done, std::chrono::steady_clock::time_point deadline,
                std::chrono::milliseconds pace = std::chrono::milliseconds(2)) {
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return done();
    std::this_thread::sleep_for(pace);
  }
  return true;
}

// The same, with the deadline `limit` from now (60 s: a generous bound for a loaded CI).
template <typename Predicate>
bool wait_for(Predicate&& done, std::chrono::milliseconds limit = std::chrono::seconds(60)) {
  return wait_until(done, std::chrono::steady_clock::now() + limit);
}

}  // namespace dsgd::test
