// CRC32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of every data frame's
// payload. crc32c() is Intel ISA-L's crc32_iscsi (libisal, Debian's libisal-dev), which
// picks the fastest code for the CPU at run time: PCLMULQDQ/VPCLMULQDQ folding where
// available, about three times the crc32 instruction alone, so a 64 MiB message costs
// about a millisecond. crc32c_portable() is Boost.CRC, bit by bit from the polynomial: the
// reference the tests hold ISA-L to. Not a general hashing library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace dsgd::sim {

// Extends `crc` (0 to start) over `bytes`: crc32c(b, crc32c(a)) == crc32c(a + b), and
// crc32c("123456789") == 0xE3069283.
uint32_t crc32c(std::span<const uint8_t> bytes, uint32_t crc = 0);
uint32_t crc32c(const void* data, size_t bytes, uint32_t crc = 0);

// The same function with Boost.CRC, for tests and benchmarks (about 0.4 GB/s).
uint32_t crc32c_portable(const void* data, size_t bytes, uint32_t crc = 0);

}  // namespace dsgd::sim
