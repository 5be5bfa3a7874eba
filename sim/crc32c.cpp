#include "sim/crc32c.h"

#include <isa-l/crc.h>

#include <algorithm>
#include <boost/crc.hpp>
#include <climits>

namespace dsgd::sim {

uint32_t crc32c(const void* data, size_t bytes, uint32_t crc) {
  // crc32_iscsi works on the raw register (no inversion in or out) and takes an int length.
  auto* next = static_cast<unsigned char*>(const_cast<void*>(data));  // ISA-L only reads it
  uint32_t reg = ~crc;
  while (bytes > 0) {
    const size_t n = std::min<size_t>(bytes, size_t{1} << 30);
    reg = crc32_iscsi(next, static_cast<int>(n), reg);
    next += n;
    bytes -= n;
  }
  return ~reg;
}

uint32_t crc32c(std::span<const uint8_t> bytes, uint32_t crc) {
  return crc32c(bytes.data(), bytes.size(), crc);
}

uint32_t crc32c_portable(const void* data, size_t len, uint32_t crc) {
  // Boost's initial remainder is the unreflected register before the final xor.
  uint32_t reflected = 0;
  for (int i = 0; i < 32; ++i)
    reflected |= ((~crc >> i) & 1u) << (31 - i);
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> engine(reflected);
  engine.process_bytes(data, len);
  return engine.checksum();
}

}  // namespace dsgd::sim
