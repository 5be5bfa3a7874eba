// CRC32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of every data frame's
// payload. Two implementations that must agree: the SSE4.2 crc32 instruction, three streams
// interleaved so that 64 MiB messages cost milliseconds, and Boost.CRC for CPUs without
// SSE4.2. crc32c() picks one at run time. Not a general hashing library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace dsgd::sim {

// Extends `crc` (0 to start) over `bytes`: crc32c(b, crc32c(a)) == crc32c(a + b), and
// crc32c("123456789") == 0xE3069283.
uint32_t crc32c(std::span<const uint8_t> bytes, uint32_t crc = 0);
uint32_t crc32c(const void* data, size_t bytes, uint32_t crc = 0);

// The two implementations, for tests and benchmarks. crc32c_sse42 may only be called
// when crc32c_has_sse42() is true (it would raise SIGILL).
bool crc32c_has_sse42();
uint32_t crc32c_sse42(const void* data, size_t bytes, uint32_t crc = 0);
uint32_t crc32c_portable(const void* data, size_t bytes, uint32_t crc = 0);

}  // namespace dsgd::sim
