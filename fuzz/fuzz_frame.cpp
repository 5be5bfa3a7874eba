// Fuzz target: the frame header decoder and the payload check (sim/frame.h). Any 48 bytes
// must decode or be refused with a reason; a decoded header must encode back to itself.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>

#include "sim/frame.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dsgd::sim;
  if (size < kFrameHeaderBytes) return 0;
  HeaderBytes bytes;
  std::memcpy(bytes.data(), data, kFrameHeaderBytes);
  std::string why;
  const auto header = decode_header(bytes, &why);
  if (!header) {
    if (why.empty()) std::abort();  // a refusal always says why
    return 0;
  }
  if (header->length > kMaxFrameBytes || header->length % 4 != 0) std::abort();
  if (encode_header(*header) != bytes) std::abort();
  const std::span<const uint8_t> payload(data + kFrameHeaderBytes, size - kFrameHeaderBytes);
  (void)check_payload(*header, payload);
  return 0;
}
