// Fnv1a: the 64-bit FNV-1a hash over values written as fixed-width little-endian bytes, so
// that equal values hash alike on every platform. Used for fingerprints that ranks compare
// (configuration, data, host) and checksums that files carry (checkpoints). Not a
// cryptographic hash: it catches accidents, not an attacker who rewrites the checksum too.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace dsgd {

class Fnv1a {
 public:
  void bytes(const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i)
      h_ = (h_ ^ p[i]) * 0x100000001b3ULL;
  }
  void u64(uint64_t v) {
    unsigned char b[8];
    for (int i = 0; i < 8; ++i)
      b[i] = static_cast<unsigned char>(v >> (8 * i));
    bytes(b, 8);
  }
  void u32(uint32_t v) {
    unsigned char b[4];
    for (int i = 0; i < 4; ++i)
      b[i] = static_cast<unsigned char>(v >> (8 * i));
    bytes(b, 4);
  }
  // A float as its bit pattern, widened to 8 bytes (what fingerprints have always hashed).
  void f32(float v) { u64(std::bit_cast<uint32_t>(v)); }
  // n floats as their 4-byte bit patterns.
  void floats(const float* p, size_t n) {
    if constexpr (std::endian::native == std::endian::little) {
      bytes(p, n * sizeof(float));
    } else {
      for (size_t i = 0; i < n; ++i)
        u32(std::bit_cast<uint32_t>(p[i]));
    }
  }
  // Its length, then its bytes.
  void text(std::string_view s) {
    u64(s.size());
    bytes(s.data(), s.size());
  }
  // The bytes alone, without a length.
  void raw(std::string_view s) { bytes(s.data(), s.size()); }
  uint64_t value() const { return h_; }

 private:
  uint64_t h_ = 0xcbf29ce484222325ULL;
};

}  // namespace dsgd
