#include "sim/frame.h"

#include <cstring>

#include <fmt/format.h>

namespace dsgd::sim {
namespace {

template <typename T>
void put(uint8_t* p, T v) {
  for (size_t i = 0; i < sizeof(T); ++i)
    p[i] = static_cast<uint8_t>(uint64_t(v) >> (8 * i));
}
template <typename T>
T get(const uint8_t* p) {
  uint64_t v = 0;
  for (size_t i = 0; i < sizeof(T); ++i)
    v |= uint64_t(p[i]) << (8 * i);
  return static_cast<T>(v);
}

}  // namespace

// Layout: magic u32 | kind u8 | 3 reserved | source i32 | tag i32 | seq u64 |
//         visible_ns i64 | model_ns i64 | length u64
HeaderBytes encode_header(const FrameHeader& h) {
  HeaderBytes b{};
  put<uint32_t>(&b[0], kFrameMagic);
  b[4] = static_cast<uint8_t>(h.kind);
  put<uint32_t>(&b[8], static_cast<uint32_t>(h.source));
  put<uint32_t>(&b[12], static_cast<uint32_t>(h.tag));
  put<uint64_t>(&b[16], h.seq);
  put<uint64_t>(&b[24], static_cast<uint64_t>(h.visible_ns));
  put<uint64_t>(&b[32], static_cast<uint64_t>(h.model_ns));
  put<uint64_t>(&b[40], h.length);
  return b;
}

std::optional<FrameHeader> decode_header(const HeaderBytes& b, std::string* why) {
  const uint32_t magic = get<uint32_t>(&b[0]);
  if (magic != kFrameMagic) {
    *why = fmt::format("bad frame magic 0x{:08x} (expected 0x{:08x}): not a dsgd peer", magic,
                       kFrameMagic);
    return std::nullopt;
  }
  FrameHeader h;
  if (b[4] != uint8_t(FrameKind::hello) && b[4] != uint8_t(FrameKind::data)) {
    *why = fmt::format("unknown frame kind {}", b[4]);
    return std::nullopt;
  }
  h.kind = static_cast<FrameKind>(b[4]);
  h.source = static_cast<int32_t>(get<uint32_t>(&b[8]));
  h.tag = static_cast<int32_t>(get<uint32_t>(&b[12]));
  h.seq = get<uint64_t>(&b[16]);
  h.visible_ns = static_cast<int64_t>(get<uint64_t>(&b[24]));
  h.model_ns = static_cast<int64_t>(get<uint64_t>(&b[32]));
  h.length = get<uint64_t>(&b[40]);
  if (h.length > kMaxFrameBytes || h.length % sizeof(float) != 0) {
    *why = fmt::format("frame length {} bytes is over the {} byte limit or not whole floats",
                       h.length, kMaxFrameBytes);
    return std::nullopt;
  }
  if (h.source < 0 || h.tag < 0) {
    *why = fmt::format("frame with negative source {} or tag {}", h.source, h.tag);
    return std::nullopt;
  }
  return h;
}

}  // namespace dsgd::sim
