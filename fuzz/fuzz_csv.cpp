// Fuzz target: CSV datasets (core/data/csv.cpp) through load_dataset. Bad input must be a
// DataError or UsageError, never a crash; the first byte picks the task.
#include <cstdint>

#include "core/data/dataset.h"
#include "core/errors.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static dsgd::fuzz::MemFile file;  // fuzz harness only: one file for the whole run
  if (size < 1) return 0;
  const dsgd::Task task = data[0] & 1 ? dsgd::Task::regression : dsgd::Task::classification;
  const std::string path = file.write(data + 1, size - 1);
  try {
    (void)dsgd::load_dataset("csv:" + path, {.task = task});
  } catch (const dsgd::Error&) {
  }
  return 0;
}
