// Seeded values for numeric tests: the same on every machine (mt19937, no distribution
// whose output the standard library may choose).
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace dsgd::test {

// `count` values in [lo, hi), on a grid of (hi - lo) / 100000.
inline std::vector<float> random_vector(size_t count, uint32_t seed, float lo = -1.0f,
                                        float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::vector<float> v(count);
  for (float& x : v)
    x = lo + (hi - lo) * static_cast<float>(gen() % 100000) / 100000.0f;
  return v;
}

}  // namespace dsgd::test
