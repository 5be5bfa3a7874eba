// CRC32C. The SSE4.2 path follows Mark Adler's crc32c.c (zlib licence, public algorithm):
// the crc32 instruction has a latency of three cycles and a throughput of one per cycle,
// so three independent streams over three adjacent blocks keep it busy; the three CRCs
// are then joined by "shifting" the earlier ones over the later blocks' length with
// precomputed tables (the GF(2) operator for appending that many zero bytes).
#include "sim/crc32c.h"

#include <array>
#include <boost/crc.hpp>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define DSGD_CRC32C_X86 1
#endif

namespace dsgd::sim {
namespace {

constexpr uint32_t kPoly = 0x82F63B78;  // reflected 0x1EDC6F41

// --- The zeros operators, built at compile time -------------------------------------------
using Matrix = std::array<uint32_t, 32>;
using ShiftTable = std::array<std::array<uint32_t, 256>, 4>;

constexpr uint32_t matrix_times(const Matrix& mat, uint32_t vec) {
  uint32_t sum = 0;
  for (int i = 0; vec != 0; ++i, vec >>= 1)
    if (vec & 1) sum ^= mat[i];
  return sum;
}

constexpr Matrix matrix_square(const Matrix& mat) {
  Matrix square{};
  for (int n = 0; n < 32; ++n)
    square[n] = matrix_times(mat, mat[n]);
  return square;
}

// The operator that appends `bytes` zero bytes (a power of two) to a CRC register.
constexpr Matrix zeros_operator(size_t bytes) {
  Matrix op{};  // one zero bit
  op[0] = kPoly;
  for (int n = 1; n < 32; ++n)
    op[n] = uint32_t{1} << (n - 1);
  for (int i = 0; i < 3; ++i)  // 2, 4, 8 bits: one zero byte
    op = matrix_square(op);
  for (; bytes > 1; bytes >>= 1)
    op = matrix_square(op);
  return op;
}

// The operator applied a byte at a time: four lookups instead of 32 conditional xors.
constexpr ShiftTable shift_table(size_t bytes) {
  const Matrix op = zeros_operator(bytes);
  ShiftTable table{};
  for (uint32_t n = 0; n < 256; ++n)
    for (int k = 0; k < 4; ++k)
      table[k][n] = matrix_times(op, n << (8 * k));
  return table;
}

constexpr size_t kLongBytes = 8192;  // each of the three streams, for large buffers
constexpr size_t kShortBytes = 256;  // ... and for the rest
constexpr ShiftTable kShiftLong = shift_table(kLongBytes);
constexpr ShiftTable kShiftShort = shift_table(kShortBytes);

uint32_t shift(const ShiftTable& table, uint32_t crc) {
  return table[0][crc & 0xff] ^ table[1][(crc >> 8) & 0xff] ^ table[2][(crc >> 16) & 0xff] ^
         table[3][crc >> 24];
}

#if DSGD_CRC32C_X86
uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Three streams over blocks of `block` bytes while `len` holds three of them.
__attribute__((target("sse4.2"))) uint64_t three_way(uint64_t crc0, const uint8_t*& next_io,
                                                     size_t& len_io, size_t block,
                                                     const ShiftTable& table) {
  const uint8_t* next = next_io;  // locals: the loop must not store through the references
  size_t len = len_io;
  while (len >= 3 * block) {
    uint64_t crc1 = 0, crc2 = 0;
    const uint8_t* const end = next + block;
    do {
      crc0 = _mm_crc32_u64(crc0, load64(next));
      crc1 = _mm_crc32_u64(crc1, load64(next + block));
      crc2 = _mm_crc32_u64(crc2, load64(next + 2 * block));
      next += 8;
    } while (next < end);
    crc0 = shift(table, static_cast<uint32_t>(crc0)) ^ crc1;
    crc0 = shift(table, static_cast<uint32_t>(crc0)) ^ crc2;
    next += 2 * block;
    len -= 3 * block;
  }
  next_io = next;
  len_io = len;
  return crc0;
}
#endif

}  // namespace

bool crc32c_has_sse42() {
#if DSGD_CRC32C_X86
  return __builtin_cpu_supports("sse4.2");
#else
  return false;
#endif
}

#if DSGD_CRC32C_X86
__attribute__((target("sse4.2"))) uint32_t crc32c_sse42(const void* data, size_t len,
                                                        uint32_t crc) {
  const auto* next = static_cast<const uint8_t*>(data);
  uint64_t crc0 = ~crc;
  for (; len > 0 && (reinterpret_cast<uintptr_t>(next) & 7) != 0; --len)
    crc0 = _mm_crc32_u8(static_cast<uint32_t>(crc0), *next++);
  crc0 = three_way(crc0, next, len, kLongBytes, kShiftLong);
  crc0 = three_way(crc0, next, len, kShortBytes, kShiftShort);
  for (; len >= 8; len -= 8, next += 8)
    crc0 = _mm_crc32_u64(crc0, load64(next));
  for (; len > 0; --len)
    crc0 = _mm_crc32_u8(static_cast<uint32_t>(crc0), *next++);
  return ~static_cast<uint32_t>(crc0);
}
#else
uint32_t crc32c_sse42(const void* data, size_t len, uint32_t crc) {
  return crc32c_portable(data, len, crc);
}
#endif

uint32_t crc32c_portable(const void* data, size_t len, uint32_t crc) {
  // Boost's initial remainder is the unreflected register before the final xor.
  uint32_t reflected = 0;
  for (int i = 0; i < 32; ++i)
    reflected |= ((~crc >> i) & 1u) << (31 - i);
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> engine(reflected);
  engine.process_bytes(data, len);
  return engine.checksum();
}

uint32_t crc32c(const void* data, size_t bytes, uint32_t crc) {
  return crc32c_has_sse42() ? crc32c_sse42(data, bytes, crc) : crc32c_portable(data, bytes, crc);
}

uint32_t crc32c(std::span<const uint8_t> bytes, uint32_t crc) {
  return crc32c(bytes.data(), bytes.size(), crc);
}

}  // namespace dsgd::sim
