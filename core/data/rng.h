// Rng: a small, self-written random generator (splitmix64 seeding xoshiro256**) whose
// output is the same on every platform and compiler, unlike <random>'s distributions.
// Used for synthetic data, the sampler's per-epoch permutations and model initialisation.
// Not for cryptography.
#pragma once

#include <cstdint>

namespace dsgd::data {

// splitmix64 (Steele, Lea, Flood 2014): turns any 64-bit seed into well-mixed state words.
inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// xoshiro256** (Blackman, Vigna 2018).
class Rng {
 public:
  // Streams for different purposes (data vs. shuffling, epoch 0 vs. epoch 1) are derived
  // from (seed, stream) so that they never overlap in practice.
  explicit Rng(uint64_t seed, uint64_t stream = 0) {
    uint64_t sm = seed ^ (stream * 0xd1342543de82ef95ULL + 0x2545f4914f6cdd1dULL);
    for (uint64_t& w : s_)
      w = splitmix64(sm);
  }

  // The state splitmix64 makes of `seed` alone, without a stream: Model::init's generator.
  struct PlainSeed {};
  static constexpr PlainSeed plain_seed{};
  Rng(PlainSeed, uint64_t seed) {
    for (uint64_t& w : s_)
      w = splitmix64(seed);
  }

  uint64_t next_u64() {
    uint64_t result = rotl(s_[1] * 5, 7) * 9;
    uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, n), n >= 1, without modulo bias: draws below (2^64 mod n) are rejected.
  uint64_t uniform_index(uint64_t n) {
    uint64_t threshold = (0 - n) % n;
    while (true) {
      uint64_t r = next_u64();
      if (r >= threshold) return r % n;
    }
  }

  // Uniform in [0, 1) with 53 random bits.
  double uniform01() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

  // Approximately standard normal: the sum of 12 uniforms minus 6 (Irwin-Hall). Exact mean
  // 0 and variance 1, tails cut at +-6. Chosen over Box-Muller because it needs no log/cos,
  // whose last bits differ between math libraries; additions are IEEE-exact everywhere.
  double normal() {
    double sum = 0.0;
    for (int i = 0; i < 12; ++i)
      sum += uniform01();
    return sum - 6.0;
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace dsgd::data
