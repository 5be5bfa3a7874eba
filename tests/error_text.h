// What a call throws, for tests that check an error's words.
#pragma once

#include <catch2/catch.hpp>
#include <string>

namespace dsgd::test {

// The message of the E that `f` throws; a failed check when it throws nothing.
template <typename E, typename F>
std::string error_text(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  FAIL("expected an exception");
  return {};
}

}  // namespace dsgd::test
