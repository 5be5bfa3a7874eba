#include "core/comm/float16.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include <bit>
#include <cstring>
#include <stdexcept>
#include <string>

namespace dsgd {
namespace {

constexpr size_t kChunk = 1024;  // values converted at a time (even: packed floats stay whole)

// bfloat16 is float32's high half, rounded to nearest even (as c10::BFloat16 rounds); a NaN
// stays a NaN.
uint16_t to_bfloat16(float x) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

// IEEE half from float32, rounded to nearest even, by bits (F. Giesen's float_to_half_fast3_rtne;
// compilers do not all take _Float16 on x86-64: clang 14 does not). Subnormal halves come from
// one float addition, which rounds to nearest even in the default rounding mode.
uint16_t to_half(float x) {
  constexpr uint32_t kInfinity = 255u << 23, kHalfOverflow = (127u + 16) << 23;
  constexpr uint32_t kSubnormalMagic = ((127u - 15) + (23 - 10) + 1) << 23;
  uint32_t u = std::bit_cast<uint32_t>(x);
  const uint32_t sign = (u >> 16) & 0x8000u;
  u &= 0x7fffffffu;
  uint32_t h;
  if (u >= kHalfOverflow) {
    h = u > kInfinity ? 0x7e00u : 0x7c00u;  // NaN stays a (quiet) NaN; too large is infinity
  } else if (u < (113u << 23)) {            // below 2^-14: a subnormal half, or zero
    const float sum = std::bit_cast<float>(u) + std::bit_cast<float>(kSubnormalMagic);
    h = std::bit_cast<uint32_t>(sum) - kSubnormalMagic;
  } else {
    const uint32_t odd = (u >> 13) & 1u;  // ties go to the even mantissa
    h = (u + (uint32_t(15 - 127) << 23) + 0xfffu + odd) >> 13;
  }
  return static_cast<uint16_t>(h | sign);
}

// Exact: every half is a float32 (Giesen's half_to_float).
float from_half(uint16_t bits) {
  constexpr uint32_t kExponent = 0x7c00u << 13;
  uint32_t u = (uint32_t{bits} & 0x7fffu) << 13;
  const uint32_t exponent = u & kExponent;
  u += (127u - 15) << 23;
  if (exponent == kExponent) {  // infinity or NaN
    u += (128u - 16) << 23;
  } else if (exponent == 0) {  // zero or subnormal: renormalised by one subtraction
    u += 1u << 23;
    u = std::bit_cast<uint32_t>(std::bit_cast<float>(u) - std::bit_cast<float>(113u << 23));
  }
  return std::bit_cast<float>(u | (uint32_t{bits} & 0x8000u) << 16);
}

#if defined(__x86_64__)
// Eight at a time with the F16C instructions (and AVX for 8 floats) where the CPU has them:
// the same rounding as to_half.
// CPUID leaf 1 says F16C, AVX and OSXSAVE; XGETBV that the OS saves the AVX registers.
bool has_f16c() {
  static const bool yes = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
    constexpr unsigned kOsxsave = 1u << 27, kAvx = 1u << 28, kF16c = 1u << 29;
    if ((c & (kOsxsave | kAvx | kF16c)) != (kOsxsave | kAvx | kF16c)) return false;
    unsigned lo = 0, hi = 0;
    __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (lo & 6u) == 6u;
  }();
  return yes;
}

__attribute__((target("avx,f16c"))) size_t to_half_f16c(const float* in, uint16_t* out, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
  return i;
}

__attribute__((target("avx,f16c"))) size_t from_half_f16c(const uint16_t* in, float* out,
                                                          size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i,
                     _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
  return i;
}
#else
bool has_f16c() {
  return false;
}
size_t to_half_f16c(const float*, uint16_t*, size_t) {
  return 0;
}
size_t from_half_f16c(const uint16_t*, float*, size_t) {
  return 0;
}
#endif

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
  return wire == WireFormat::bf16 ? to_bfloat16(x) : to_half(x);
}

float from_float16(uint16_t bits, WireFormat wire) {
  if (wire == WireFormat::bf16) return std::bit_cast<float>(uint32_t{bits} << 16);
  return from_half(bits);
}

void to_float16(std::span<const float> in, std::span<uint16_t> out, WireFormat wire) {
  size_t i =
      wire == WireFormat::f16 && has_f16c() ? to_half_f16c(in.data(), out.data(), in.size()) : 0;
  for (; i < in.size(); ++i)
    out[i] = to_float16(in[i], wire);
}

void from_float16(std::span<const uint16_t> in, std::span<float> out, WireFormat wire) {
  size_t i =
      wire == WireFormat::f16 && has_f16c() ? from_half_f16c(in.data(), out.data(), in.size()) : 0;
  for (; i < in.size(); ++i)
    out[i] = from_float16(in[i], wire);
}

size_t packed_size(size_t values, WireFormat wire) {
  return wire == WireFormat::f32 ? values : (values + 1) / 2;
}

// Packed floats hold their halves in memory order on a little-endian machine (element 2i in
// the low half), so a packed buffer's bytes are its 16-bit values in order.
static_assert(std::endian::native == std::endian::little);

void pack(std::span<const float> values, std::span<float> packed, WireFormat wire) {
  check_sizes(values.size(), packed.size(), wire, "pack");
  if (wire == WireFormat::f32) {
    std::copy(values.begin(), values.end(), packed.begin());
    return;
  }
  uint16_t halves[kChunk + 1];
  for (size_t at = 0; at < values.size(); at += kChunk) {
    const size_t n = std::min(kChunk, values.size() - at);
    to_float16(values.subspan(at, n), std::span(halves, n), wire);
    halves[n] = 0;  // an odd count's spare half
    std::memcpy(packed.data() + at / 2, halves, (n + 1) / 2 * sizeof(float));
  }
}

void unpack(std::span<const float> packed, std::span<float> values, WireFormat wire) {
  check_sizes(values.size(), packed.size(), wire, "unpack");
  if (wire == WireFormat::f32) {
    std::copy(packed.begin(), packed.end(), values.begin());
    return;
  }
  uint16_t halves[kChunk + 1];
  for (size_t at = 0; at < values.size(); at += kChunk) {
    const size_t n = std::min(kChunk, values.size() - at);
    std::memcpy(halves, packed.data() + at / 2, (n + 1) / 2 * sizeof(float));
    from_float16(std::span(halves, n), values.subspan(at, n), wire);
  }
}

}  // namespace dsgd
