// Wire frames of the simulated transport: a fixed 48-byte little-endian header, then
// `length` payload bytes whose CRC32C the header carries (between processes; the nodes of
// one process send 0 there and check nothing: SimNode::checksums_). decode_header() checks
// magic, kind, reserved bytes and length *before* the receiver allocates anything, so a
// foreign or corrupt peer cannot make it allocate; check_payload() then checks the CRC.
// Not a general serializer: payloads are raw float32 arrays.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace dsgd::sim {

inline constexpr uint32_t kFrameMagic = 0x44534744;  // "DSGD" read as little-endian bytes
inline constexpr size_t kFrameHeaderBytes = 48;
inline constexpr uint64_t kMaxFrameBytes = uint64_t{1} << 31;  // 2 GiB: larger is refused

// data_sync is data whose sender waits until the receiver matches it with a posted receive
// (a send above the eager limit, MPI's rendezvous protocol); the receiver then answers with
// a `matched` frame: no payload, seq and tag of the message matched, model_ns the model time
// of the match (the later of the message's arrival and its receive being posted).
// farewell: the sender leaves the run because it failed; its payload is why, in UTF-8
// padded with zero bytes to whole floats (at most kMaxFarewellBytes), so that a rank that
// loses it can say what it died of (a rank it lost in turn, most often).
enum class FrameKind : uint8_t { hello = 1, data = 2, data_sync = 3, matched = 4, farewell = 5 };
inline constexpr uint64_t kMaxFarewellBytes = 4096;

struct FrameHeader {
  FrameKind kind = FrameKind::data;
  int32_t source = 0;
  int32_t tag = 0;
  uint64_t seq = 0;        // per (source, destination) sequence number, from 0
  int64_t visible_ns = 0;  // network-clock time (ns) the link model says it arrives
  int64_t model_ns = 0;    // model time (ns) it arrives
  uint64_t length = 0;     // payload bytes, a multiple of 4 (float32), <= kMaxFrameBytes
  uint32_t crc32c = 0;     // CRC32C of the payload (crc32c.h)
};

using HeaderBytes = std::array<uint8_t, kFrameHeaderBytes>;

HeaderBytes encode_header(const FrameHeader& header);
// Returns the header, or nullopt with *why set to a one-line reason (bad magic, unknown
// kind, length over kMaxFrameBytes or not a whole number of floats, negative source).
std::optional<FrameHeader> decode_header(const HeaderBytes& bytes, std::string* why);
// "" when `payload` is the one `header` describes (its length and CRC32C), otherwise why
// not ("payload CRC32C 0x... but the header says 0x...: corrupt frame").
std::string check_payload(const FrameHeader& header, std::span<const uint8_t> payload);

}  // namespace dsgd::sim
