#include "core/comm/float16.h"

#include <bit>
#include <stdexcept>
#include <string>

namespace dsgd {
namespace {

// bfloat16 is float32's high half, rounded to nearest even (as c10::BFloat16 rounds); a NaN
// stays a NaN.
uint16_t to_bfloat16(float x) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

void check_sizes(size_t values, size_t packed, WireFormat wire, const char* what) {
  if (packed != packed_size(values, wire))
    throw std::logic_error(std::string(what) + ": " + std::to_string(values) + " values in " +
                           std::to_string(packed) + " floats");
}

}  // namespace

const char* to_string(WireFormat wire) {
  switch (wire) {
    case WireFormat::f32:
      return "float32";
    case WireFormat::f16:
      return "float16";
    case WireFormat::bf16:
      return "bfloat16";
  }
  return "?";
}

uint16_t to_float16(float x, WireFormat wire) {
  if (wire == WireFormat::bf16) return to_bfloat16(x);
  return std::bit_cast<uint16_t>(static_cast<_Float16>(x));  // the compiler's IEEE rounding
}

float from_float16(uint16_t bits, WireFormat wire) {
  if (wire == WireFormat::bf16) return std::bit_cast<float>(uint32_t{bits} << 16);
  return static_cast<float>(std::bit_cast<_Float16>(bits));
}

size_t packed_size(size_t values, WireFormat wire) {
  return wire == WireFormat::f32 ? values : (values + 1) / 2;
}

void pack(std::span<const float> values, std::span<float> packed, WireFormat wire) {
  check_sizes(values.size(), packed.size(), wire, "pack");
  if (wire == WireFormat::f32) {
    std::copy(values.begin(), values.end(), packed.begin());
    return;
  }
  for (size_t i = 0; i < packed.size(); ++i) {
    const uint32_t lo = to_float16(values[2 * i], wire);
    const uint32_t hi = 2 * i + 1 < values.size() ? to_float16(values[2 * i + 1], wire) : 0;
    packed[i] = std::bit_cast<float>(lo | hi << 16);
  }
}

void unpack(std::span<const float> packed, std::span<float> values, WireFormat wire) {
  check_sizes(values.size(), packed.size(), wire, "unpack");
  if (wire == WireFormat::f32) {
    std::copy(packed.begin(), packed.end(), values.begin());
    return;
  }
  for (size_t i = 0; i < packed.size(); ++i) {
    const uint32_t u = std::bit_cast<uint32_t>(packed[i]);
    values[2 * i] = from_float16(static_cast<uint16_t>(u & 0xffffu), wire);
    if (2 * i + 1 < values.size())
      values[2 * i + 1] = from_float16(static_cast<uint16_t>(u >> 16), wire);
  }
}

}  // namespace dsgd
