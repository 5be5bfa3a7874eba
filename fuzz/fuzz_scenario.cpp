// Fuzz target: TOML scenarios (sim/scenario.h). Bad input must be a DataError or
// UsageError naming the place, never a crash.
#include <cstdint>
#include <string_view>

#include "core/errors.h"
#include "sim/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto scenario = dsgd::sim::parse_scenario(
        std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.toml");
    dsgd::sim::ClusterOptions options;
    dsgd::sim::apply(scenario, options);
  } catch (const dsgd::Error&) {
  }
  return 0;
}
