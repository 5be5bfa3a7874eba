// The 16-bit wire of the compression hooks: IEEE float16 and bfloat16 rounding (to nearest,
// ties to even, as torch's casts), the packing two to a float, and all_reduce over packed
// values with every algorithm: each partial sum rounded to 16 bits, half the bytes.
#include <catch2/catch.hpp>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/comm/collectives.h"
#include "core/comm/float16.h"
#include "sim/cluster.h"

using namespace dsgd;

TEST_CASE("float16 and bfloat16 round to nearest, ties to even", "[float16]") {
  CHECK(to_float16(1.0f, WireFormat::f16) == 0x3c00);
  CHECK(to_float16(1.0f / 3, WireFormat::f16) == 0x3555);
  CHECK(to_float16(65520.0f, WireFormat::f16) == 0x7c00);  // past the largest: infinity
  CHECK(from_float16(0x0001, WireFormat::f16) == std::ldexp(1.0f, -24));  // smallest subnormal
  CHECK(to_float16(1.0f, WireFormat::bf16) == 0x3f80);
  CHECK(to_float16(1.0f + std::ldexp(1.0f, -8), WireFormat::bf16) == 0x3f80);  // tie: even
  CHECK(to_float16(1.0f + 3 * std::ldexp(1.0f, -8), WireFormat::bf16) == 0x3f82);
  CHECK(std::isnan(round_to(std::numeric_limits<float>::quiet_NaN(), WireFormat::bf16)));
  CHECK(std::isnan(round_to(std::numeric_limits<float>::quiet_NaN(), WireFormat::f16)));
  for (WireFormat wire : {WireFormat::f16, WireFormat::bf16})
    for (float x : {0.5f, -2.0f, 0.0f, 1024.0f})
      CHECK(round_to(x, wire) == x);  // representable values pass unchanged
}

TEST_CASE("every float16 converts to float32 and back exactly, and halfway rounds to even",
          "[float16]") {
  const WireFormat h = WireFormat::f16;
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const float x = from_float16(static_cast<uint16_t>(b), h);
    if (std::isnan(x)) continue;
    if (to_float16(x, h) != b) FAIL("bits " << b << " -> " << x << " -> " << to_float16(x, h));
  }
  // Halfway between two neighbours (exact in float32): the one with an even last bit.
  for (uint32_t b = 0; b < 0x7bff; ++b) {
    const float mid = (from_float16(static_cast<uint16_t>(b), h) +
                       from_float16(static_cast<uint16_t>(b + 1), h)) /
                      2;
    const uint16_t want = static_cast<uint16_t>(b % 2 == 0 ? b : b + 1);
    if (to_float16(mid, h) != want) FAIL("halfway above bits " << b);
    if (to_float16(-mid, h) != (want | 0x8000)) FAIL("halfway below bits " << (b | 0x8000));
  }
}

TEST_CASE("converting many at once (F16C where the CPU has it) equals one at a time", "[float16]") {
  std::mt19937 gen(5);
  std::vector<float> xs;
  for (int i = 0; i < 20000; ++i) {  // every magnitude a half has, and past it
    const float mantissa = float(gen() % 100000) / 100000.0f;
    xs.push_back((i % 2 ? -1.0f : 1.0f) * std::ldexp(1.0f + mantissa, int(gen() % 50) - 30));
  }
  xs.push_back(std::numeric_limits<float>::infinity());
  xs.push_back(0.0f);
  for (WireFormat wire : {WireFormat::f16, WireFormat::bf16}) {
    std::vector<uint16_t> bits(xs.size());
    to_float16(xs, bits, wire);
    std::vector<float> back(xs.size());
    from_float16(bits, back, wire);
    for (size_t i = 0; i < xs.size(); ++i) {
      if (bits[i] != to_float16(xs[i], wire)) FAIL(to_string(wire) << " value " << xs[i]);
      if (back[i] != from_float16(bits[i], wire)) FAIL(to_string(wire) << " bits " << bits[i]);
    }
  }
}

TEST_CASE("packing holds two 16-bit values per float, and unpacks them", "[float16]") {
  const std::vector<float> values{0.5f, -1.25f, 3.0f, 0.1f, 7.0f};
  for (WireFormat wire : {WireFormat::f16, WireFormat::bf16}) {
    std::vector<float> packed(packed_size(values.size(), wire));
    CHECK(packed.size() == 3);
    pack(values, packed, wire);
    std::vector<float> back(values.size());
    unpack(packed, back, wire);
    for (size_t i = 0; i < values.size(); ++i)
      CHECK(back[i] == round_to(values[i], wire));
    CHECK((std::bit_cast<uint32_t>(packed[2]) >> 16) == 0);  // an odd count's spare half
  }
  std::vector<float> many(3001);  // past the 1024 values converted at a time
  for (size_t i = 0; i < many.size(); ++i)
    many[i] = std::sin(float(i)) * 100;
  std::vector<float> packed(packed_size(many.size(), WireFormat::f16)), back(many.size());
  pack(many, packed, WireFormat::f16);
  unpack(packed, back, WireFormat::f16);
  for (size_t i = 0; i < many.size(); ++i)
    if (back[i] != round_to(many[i], WireFormat::f16)) FAIL("value " << i);
}

TEST_CASE("a 16-bit all_reduce rounds each sum to 16 bits, with every algorithm",
          "[float16][collectives]") {
  const size_t count = 2501;  // odd, more than one chunk per rank, past 512 packed floats
  const auto value = [](int rank, size_t i) {
    return std::sin(float(i) * 0.731f + float(rank) * 1.3f) * 3.0f;
  };
  for (Algorithm a :
       {Algorithm::naive, Algorithm::ring, Algorithm::tree, Algorithm::halving_doubling}) {
    for (WireFormat wire : {WireFormat::f16, WireFormat::bf16}) {
      CAPTURE(to_string(a), to_string(wire));
      std::vector<std::vector<float>> got(2);
      std::vector<uint64_t> bytes(2);
      sim::run_cluster({.nodes = 2}, [&](Communicator& comm) {
        std::vector<float> values(count);
        for (size_t i = 0; i < count; ++i)
          values[i] = value(comm.rank(), i);
        std::vector<float> packed(packed_size(count, wire));
        pack(values, packed, wire);
        all_reduce(comm, packed, {ReduceOp::SUM, wire}, {.algorithm = a});
        unpack(packed, values, wire);
        got[comm.rank()] = values;
        bytes[comm.rank()] = comm.bytes_sent();
      });
      CHECK(got[0] == got[1]);
      for (size_t i = 0; i < count; ++i) {
        // Two ranks: one addition, of the two rounded values, rounded (as Gloo's float16 sum).
        const float want =
            round_to(round_to(value(0, i), wire) + round_to(value(1, i), wire), wire);
        if (got[0][i] != want) FAIL("value " << i << ": " << got[0][i] << " != " << want);
      }
      CHECK(bytes[0] <= (count + 1) / 2 * sizeof(float) * 2);  // at most a 16-bit buffer each way
    }
  }
}
