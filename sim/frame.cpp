#include "sim/frame.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "sim/crc32c.h"

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

// Layout (protocol version 2): magic u32 | kind u8 | 3 reserved (0) | source i32 | tag i32 |
//   seq u64 | visible_ns i64 | model_ns i64 | length u32 | crc32c u32
// (Version 1 had length u64 and no CRC: a version-1 hello still decodes far enough to be
// refused as "wrong protocol version 1".)
HeaderBytes encode_header(const FrameHeader& h) {
  HeaderBytes b{};
  put<uint32_t>(&b[0], kFrameMagic);
  b[4] = static_cast<uint8_t>(h.kind);
  put<uint32_t>(&b[8], static_cast<uint32_t>(h.source));
  put<uint32_t>(&b[12], static_cast<uint32_t>(h.tag));
  put<uint64_t>(&b[16], h.seq);
  put<uint64_t>(&b[24], static_cast<uint64_t>(h.visible_ns));
  put<uint64_t>(&b[32], static_cast<uint64_t>(h.model_ns));
  // A length that does not fit is written as the largest u32, which decode refuses.
  put<uint32_t>(&b[40], static_cast<uint32_t>(std::min<uint64_t>(h.length, UINT32_MAX)));
  put<uint32_t>(&b[44], h.crc32c);
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
  if (b[4] < uint8_t(FrameKind::hello) || b[4] > uint8_t(FrameKind::farewell)) {
    *why = fmt::format("unknown frame kind {}", b[4]);
    return std::nullopt;
  }
  if (b[5] != 0 || b[6] != 0 || b[7] != 0) {
    *why = fmt::format("frame with reserved bytes 0x{:02x}{:02x}{:02x} set: not this protocol",
                       b[5], b[6], b[7]);
    return std::nullopt;
  }
  h.kind = static_cast<FrameKind>(b[4]);
  h.source = static_cast<int32_t>(get<uint32_t>(&b[8]));
  h.tag = static_cast<int32_t>(get<uint32_t>(&b[12]));
  h.seq = get<uint64_t>(&b[16]);
  h.visible_ns = static_cast<int64_t>(get<uint64_t>(&b[24]));
  h.model_ns = static_cast<int64_t>(get<uint64_t>(&b[32]));
  h.length = get<uint32_t>(&b[40]);
  h.crc32c = get<uint32_t>(&b[44]);
  if (h.length > kMaxFrameBytes || h.length % sizeof(float) != 0) {
    *why = fmt::format("frame length {} bytes is over the {} byte limit or not whole floats",
                       h.length, kMaxFrameBytes);
    return std::nullopt;
  }
  if (h.kind == FrameKind::matched && h.length != 0) {
    *why = fmt::format("a matched frame with a payload of {} bytes", h.length);
    return std::nullopt;
  }
  if (h.kind == FrameKind::farewell && h.length > kMaxFarewellBytes) {
    *why = fmt::format("a farewell of {} bytes (at most {})", h.length, kMaxFarewellBytes);
    return std::nullopt;
  }
  if (h.source < 0 || h.tag < 0) {
    *why = fmt::format("frame with negative source {} or tag {}", h.source, h.tag);
    return std::nullopt;
  }
  return h;
}

std::string check_payload(const FrameHeader& header, std::span<const uint8_t> payload) {
  if (payload.size() != header.length)
    return fmt::format("payload of {} bytes but the header says {}", payload.size(), header.length);
  const uint32_t crc = crc32c(payload);
  if (crc != header.crc32c)
    return fmt::format("payload CRC32C 0x{:08x} but the header says 0x{:08x}: corrupt frame", crc,
                       header.crc32c);
  return "";
}

}  // namespace dsgd::sim
