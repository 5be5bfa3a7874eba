// Skipping a test that cannot run here, so that CTest reports it as skipped, never passed
// (Catch2 v2.13 has no SKIP). DSGD_SKIP_UNLESS(requirement, available, why) prints
// "SKIPPED: <test>: <why>" and returns from the test; when every test case a process ran
// was skipped (under CTest: the one it was started for), the process exits kSkipExitCode,
// which tests/CMakeLists.txt gives CTest as SKIP_RETURN_CODE. Not for failures: a failed
// check still fails the test.
#pragma once

#include <string>
#include <string_view>

namespace dsgd::test {

inline constexpr int kSkipExitCode = 77;

// True when `available` and the environment variable DSGD_TEST_WITHOUT (a comma-separated
// list, e.g. "xvfb,fashion-mnist") does not name `requirement`: that variable lets you see
// the skip path on a machine that has everything.
bool available_here(std::string_view requirement, bool available);
// Records that the running test case was skipped, and why.
void mark_skipped(const std::string& why);

// Runs the Catch2 session (every test main calls it): Catch2's exit code, or kSkipExitCode
// when every test case run was skipped (a failure count of 77 becomes 1).
int run_catch(int argc, char** argv);

}  // namespace dsgd::test

#define DSGD_SKIP_UNLESS(requirement, available, why)            \
  do {                                                           \
    if (!::dsgd::test::available_here(requirement, available)) { \
      ::dsgd::test::mark_skipped(why);                           \
      return;                                                    \
    }                                                            \
  } while (0)
