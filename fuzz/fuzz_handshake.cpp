// Fuzz target: the hello decoder and its checks (sim/handshake.h). A hello that decodes
// must encode back to a frame whose payload decodes to the same fields.
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>

#include "sim/handshake.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dsgd::sim;
  const std::span<const uint8_t> payload(data, size);
  std::string why;
  const auto hello = decode_hello(payload, &why);
  if (!hello) {
    if (why.empty()) std::abort();
    return 0;
  }
  const std::string refused =
      check_hello(*hello, {.token = "sesame", .epoch_ns = 1, .run_hash = 2}, 4, 0);
  // Only a hello that could be let in must survive the round trip: a negative rank is
  // refused by check_hello, and its frame (source < 0) by decode_header.
  if (hello->rank < 0 || hello->world < 0) {
    if (refused.empty()) std::abort();
    return 0;
  }
  const std::vector<uint8_t> frame = encode_hello(*hello);
  HeaderBytes header_bytes;
  std::copy_n(frame.begin(), kFrameHeaderBytes, header_bytes.begin());
  const auto header = decode_header(header_bytes, &why);
  if (!header || header->kind != FrameKind::hello) std::abort();
  const std::span<const uint8_t> again(frame.data() + kFrameHeaderBytes,
                                       frame.size() - kFrameHeaderBytes);
  if (!check_payload(*header, again).empty()) std::abort();
  const auto back = decode_hello(again, &why);
  if (!back || back->token != hello->token || back->rank != hello->rank ||
      back->world != hello->world || back->epoch_ns != hello->epoch_ns ||
      back->run_hash != hello->run_hash || back->host_id != hello->host_id ||
      back->port != hello->port)
    std::abort();
  return 0;
}
