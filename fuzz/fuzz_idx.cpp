// Fuzz target: IDX files (core/data/idx.cpp, gzip or plain) through load_dataset. The
// first two bytes say where the input splits into the images file and the labels file.
#include <cstdint>

#include "core/data/dataset.h"
#include "core/errors.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static dsgd::fuzz::MemFile images, labels;  // fuzz harness only
  if (size < 2) return 0;
  const size_t rest = size - 2;
  const size_t split = (size_t{data[0]} | size_t{data[1]} << 8) % (rest + 1);
  const std::string a = images.write(data + 2, split);
  const std::string b = labels.write(data + 2 + split, rest - split);
  try {
    (void)dsgd::load_dataset("idx:" + a + "," + b);
  } catch (const dsgd::Error&) {
  }
  return 0;
}
