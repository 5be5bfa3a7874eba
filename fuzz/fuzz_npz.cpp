// Fuzz target: .npz archives and the .npy decoder (core/io/npz.h). The input is read both
// as an archive and as one .npy entry; bad input must be a DataError, never a crash.
#include <cstdint>
#include <string_view>

#include "core/errors.h"
#include "core/io/npz.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static dsgd::fuzz::MemFile file;  // fuzz harness only
  try {
    (void)dsgd::decode_npy(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.npy");
  } catch (const dsgd::Error&) {
  }
  const std::string path = file.write(data, size);
  try {
    (void)dsgd::read_npz_archive(path);
  } catch (const dsgd::Error&) {
  }
  return 0;
}
