// 16-bit floats on a float32 wire. The Communicator moves float32s; the gradient compression
// hooks' all_reduce (core/train/comm_hook.h) moves IEEE half (float16) or bfloat16 values,
// two to a float32, bit for bit, so a message of C values is 2C bytes, as torch's float16
// tensors are. The packed floats are never computed with as float32s (their bits may spell a
// NaN); every backend copies them unchanged.
// Rounding is to nearest, ties to even, as torch's .to(torch.float16 / torch.bfloat16).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace dsgd {

// How a reducing collective's floats hold their values (reduce_op.h's Reduction).
enum class WireFormat {
  f32,   // one float32 each
  f16,   // two IEEE float16 each: element 2i in the low 16 bits, 2i + 1 in the high
  bf16,  // two bfloat16 each, likewise
};

const char* to_string(WireFormat wire);  // "float32", "float16", "bfloat16"

// The float16 / bfloat16 nearest to x, and back (exact).
uint16_t to_float16(float x, WireFormat wire);
float from_float16(uint16_t bits, WireFormat wire);
// Many at once (the F16C instructions where the CPU has them): out[i] = to_float16(in[i]),
// and back. Sizes must match.
void to_float16(std::span<const float> in, std::span<uint16_t> out, WireFormat wire);
void from_float16(std::span<const uint16_t> in, std::span<float> out, WireFormat wire);
// x rounded to the 16-bit format and back.
inline float round_to(float x, WireFormat wire) {
  return wire == WireFormat::f32 ? x : from_float16(to_float16(x, wire), wire);
}

// Floats that hold `values` elements in `wire`: ceil(values / 2) for the 16-bit formats.
size_t packed_size(size_t values, WireFormat wire);
// values -> packed (packed.size() == packed_size(values.size())); an odd count's last float
// holds a zero in its high half. And the inverse (values.size() says how many to take). The
// two buffers must not overlap.
void pack(std::span<const float> values, std::span<float> packed, WireFormat wire);
void unpack(std::span<const float> packed, std::span<float> values, WireFormat wire);

}  // namespace dsgd
