#include "core/comm/reduce_op.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "core/errors.h"

namespace dsgd {

const char* to_string(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM:
      return "sum";
    case ReduceOp::AVG:
      return "avg";
    case ReduceOp::MAX:
      return "max";
    case ReduceOp::MIN:
      return "min";
    case ReduceOp::PROD:
      return "prod";
  }
  return "?";
}

ReduceOp parse_reduce_op(const std::string& text) {
  std::string t = text;
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
  if (t == "sum") return ReduceOp::SUM;
  if (t == "avg") return ReduceOp::AVG;
  if (t == "max") return ReduceOp::MAX;
  if (t == "min") return ReduceOp::MIN;
  if (t == "prod") return ReduceOp::PROD;
  throw UsageError("unknown reduce op '" + text + "': use sum, avg, max, min or prod");
}

float reduce_pair(float a, float b, ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM:
    case ReduceOp::AVG:
      return a + b;
    case ReduceOp::MAX:
      return std::max(a, b);
    case ReduceOp::MIN:
      return std::min(a, b);
    case ReduceOp::PROD:
      return a * b;
  }
  return a;
}

namespace {

// One packed float's two 16-bit values, each through f, back into the same place.
template <class F>
float each_half(float packed, WireFormat wire, F f) {
  const uint32_t u = std::bit_cast<uint32_t>(packed);
  const uint32_t lo =
      to_float16(f(from_float16(static_cast<uint16_t>(u & 0xffffu), wire), 0), wire);
  const uint32_t hi = to_float16(f(from_float16(static_cast<uint16_t>(u >> 16), wire), 1), wire);
  return std::bit_cast<float>(lo | hi << 16);
}

// Through float32, a chunk at a time: both sides' 16-bit values out, combined, rounded back.
void reduce_packed(std::span<float> acc, std::span<const float> in, Reduction r) {
  constexpr size_t kFloats = 512;  // packed floats a chunk
  uint16_t a16[2 * kFloats], b16[2 * kFloats];
  float a[2 * kFloats], b[2 * kFloats];
  for (size_t at = 0; at < acc.size(); at += kFloats) {
    const size_t n = std::min(kFloats, acc.size() - at), values = 2 * n;
    std::memcpy(a16, acc.data() + at, n * sizeof(float));
    std::memcpy(b16, in.data() + at, n * sizeof(float));
    from_float16(std::span(a16, values), std::span(a, values), r.wire);
    from_float16(std::span(b16, values), std::span(b, values), r.wire);
    reduce_into(std::span(a, values), std::span<const float>(b, values), r.op);
    to_float16(std::span<const float>(a, values), std::span(a16, values), r.wire);
    std::memcpy(acc.data() + at, a16, n * sizeof(float));
  }
}

}  // namespace

void reduce_into(std::span<float> acc, std::span<const float> in, Reduction r) {
  if (r.phantom) return;
  if (acc.size() != in.size())
    throw std::logic_error("reduce_into: " + std::to_string(acc.size()) + " vs " +
                           std::to_string(in.size()) + " elements");
  if (r.wire != WireFormat::f32) return reduce_packed(acc, in, r);
  const ReduceOp op = r.op;
  float* a = acc.data();
  const float* b = in.data();
  const size_t n = acc.size();
  // Plain loops the compiler vectorises; one switch outside the loop, not per element.
  switch (op) {
    case ReduceOp::SUM:
    case ReduceOp::AVG:
      for (size_t i = 0; i < n; ++i)
        a[i] += b[i];
      break;
    case ReduceOp::MAX:
      for (size_t i = 0; i < n; ++i)
        a[i] = std::max(a[i], b[i]);
      break;
    case ReduceOp::MIN:
      for (size_t i = 0; i < n; ++i)
        a[i] = std::min(a[i], b[i]);
      break;
    case ReduceOp::PROD:
      for (size_t i = 0; i < n; ++i)
        a[i] *= b[i];
      break;
  }
}

void finish_reduce(std::span<float> data, Reduction r, int world) {
  if (r.op != ReduceOp::AVG || world <= 1 || r.phantom) return;
  // Divide rather than multiply by 1/world: the same rounding as torch's AVG.
  const float w = static_cast<float>(world);
  if (r.wire != WireFormat::f32) {
    for (float& v : data)
      v = each_half(v, r.wire, [w](float x, int) { return x / w; });
    return;
  }
  for (float& v : data)
    v /= w;
}

}  // namespace dsgd
