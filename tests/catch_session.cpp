// The Catch2 v2 implementation and session for every test program, with the bookkeeping
// of skipped test cases behind tests/skip.h: a listener notes each test case as it starts,
// and run_catch turns "everything run was skipped" into kSkipExitCode.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <set>

#include "skip.h"

namespace dsgd::test {

namespace {

// What this process ran and skipped; test cases run one at a time on Catch2's thread.
struct SkipLog {
  std::string current;
  int cases_run = 0;
  std::set<std::string> skipped;
};
SkipLog skip_log;

class SkipListener : public Catch::TestEventListenerBase {
 public:
  using TestEventListenerBase::TestEventListenerBase;
  void testCaseStarting(const Catch::TestCaseInfo& info) override {
    skip_log.current = info.name;
    ++skip_log.cases_run;
  }
};

}  // namespace

bool available_here(std::string_view requirement, bool available) {
  const char* without = std::getenv("DSGD_TEST_WITHOUT");
  if (!available || !without) return available;
  const std::string list = "," + std::string(without) + ",";
  return list.find("," + std::string(requirement) + ",") == std::string::npos;
}

void mark_skipped(const std::string& why) {
  std::printf("SKIPPED: %s: %s\n", skip_log.current.c_str(), why.c_str());
  std::fflush(stdout);
  skip_log.skipped.insert(skip_log.current);
}

int run_catch(int argc, char** argv) {
  const int result = Catch::Session().run(argc, argv);
  if (result != 0) return result == kSkipExitCode ? 1 : result;  // 77 failures are failures
  if (skip_log.skipped.empty()) return 0;
  std::printf("%zu of %d test cases skipped:\n", skip_log.skipped.size(), skip_log.cases_run);
  for (const std::string& name : skip_log.skipped)
    std::printf("  %s\n", name.c_str());
  return static_cast<int>(skip_log.skipped.size()) == skip_log.cases_run ? kSkipExitCode : 0;
}

CATCH_REGISTER_LISTENER(SkipListener)

}  // namespace dsgd::test
