// Report: what one rank of the conformance suite checked and which checks failed, one line
// each ("R=4 rank 2: all_reduce ring SUM c=5: [3] = 7 (want 8)"). Not an assertion library:
// it never throws or aborts, so one run lists every failure; the runner (a Catch2 test on
// simulated nodes, or the MPI program) turns the lines into a failed test.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace dsgd::conformance {

class Report {
 public:
  explicit Report(std::string who) : who_(std::move(who)) {}

  // Counts one check; on failure, records `describe` (a string, or a function returning
  // one, called only then).
  template <typename Describe>
  void expect(bool ok, Describe&& describe) {
    ++checks_;
    if (!ok) fail(text_of(describe));
  }
  void fail(const std::string& what);

  // got[i] == want(i) for every i, else one failure naming the first wrong element and
  // how many are wrong. `describe` as for expect.
  template <typename Want, typename Describe>
  void expect_values(std::span<const float> got, Want&& want, Describe&& describe) {
    ++checks_;
    size_t wrong = 0, first = 0;
    for (size_t i = 0; i < got.size(); ++i)
      if (got[i] != want(i) && wrong++ == 0) first = i;
    if (wrong)
      fail(fmt::format("{}: [{}] = {} (want {}), {} of {} elements wrong", text_of(describe), first,
                       got[first], want(first), wrong, got.size()));
  }

  const std::string& who() const { return who_; }
  int checks() const { return checks_; }
  const std::vector<std::string>& failures() const { return failures_; }

 private:
  template <typename Describe>
  static std::string text_of(Describe&& describe) {
    if constexpr (std::is_invocable_v<Describe>)
      return describe();
    else
      return std::string(describe);
  }

  std::string who_;
  int checks_ = 0;
  std::vector<std::string> failures_;
};

}  // namespace dsgd::conformance
