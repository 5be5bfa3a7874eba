// Fuzz target: `dsgd trace check` (core/io/trace.h). Any text is either not a trace
// (DataError) or a trace with a list of problems, never a crash.
#include <cstdint>
#include <string_view>

#include "core/errors.h"
#include "core/io/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)dsgd::check_trace_text(std::string_view(reinterpret_cast<const char*>(data), size),
                                 "fuzz.json");
  } catch (const dsgd::Error&) {
  }
  return 0;
}
