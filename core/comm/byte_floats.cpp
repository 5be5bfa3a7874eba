#include "core/comm/byte_floats.h"

#include <cmath>

#include <fmt/format.h>

#include "core/errors.h"

namespace dsgd {

std::vector<float> bytes_to_floats(std::span<const uint8_t> bytes) {
  std::vector<float> out((bytes.size() + 1) / 2);
  for (size_t i = 0; i < bytes.size(); ++i)
    out[i / 2] += static_cast<float>(i % 2 == 0 ? bytes[i] : bytes[i] * 256u);
  return out;
}

void floats_to_bytes(std::span<const float> floats, std::span<uint8_t> bytes) {
  if (floats.size() != (bytes.size() + 1) / 2)
    throw CommError(fmt::format("a byte message of {} floats cannot hold {} bytes", floats.size(),
                                bytes.size()),
                    -1);
  for (size_t k = 0; k < floats.size(); ++k) {
    const float f = floats[k];
    const bool last_odd = 2 * k + 1 == bytes.size();
    if (!(f >= 0 && f <= (last_odd ? 255.0f : 65535.0f)) || std::floor(f) != f)
      throw CommError(fmt::format("a byte message holds {} at float {}: not made by dsgd", f, k),
                      -1);
    const auto v = static_cast<uint32_t>(f);
    bytes[2 * k] = static_cast<uint8_t>(v & 0xff);
    if (!last_odd) bytes[2 * k + 1] = static_cast<uint8_t>(v >> 8);
  }
}

}  // namespace dsgd
