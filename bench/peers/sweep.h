// What every peer program of the peer bench (bench/peers/run.sh) shares: the sizes of the
// all_reduce sweep, how many timed iterations each gets, the input every rank sums and the
// check of the result, and the line each size prints. Header-only and free of dsgd's
// libraries, so a peer program measures its peer alone.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace peers {

// 4 KiB to 64 MiB of float32, each size 4 times the one before.
inline std::vector<size_t> sweep_bytes() {
  std::vector<size_t> sizes;
  for (size_t b = 4 << 10; b <= (64u << 20); b *= 4)
    sizes.push_back(b);
  return sizes;
}

// Timed iterations: about 256 MiB of payload per size, 5 to 200.
inline int iterations(size_t bytes) {
  return static_cast<int>(std::clamp<size_t>((256u << 20) / bytes, 5, 200));
}
inline constexpr int kWarmup = 3;

// Rank r's input: r + 1 + (i % 7), so the sum over `world` ranks is known at every index.
inline void fill(std::vector<float>& v, int rank) {
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(rank + 1 + int(i % 7));
}
inline bool summed(const std::vector<float>& v, int world) {
  const float base = static_cast<float>(world * (world + 1) / 2);
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] != base + static_cast<float>(world * int(i % 7))) return false;
  return true;
}

inline double median(std::vector<double> s) {
  std::sort(s.begin(), s.end());
  return s[s.size() / 2];
}

// One JSON line: the median time of an all_reduce of `bytes` on `world` ranks, its bus
// bandwidth (nccl-tests' busbw: 2 (n - 1) / n x bytes / time) and whether every result was
// the sum.
inline void print_row(const char* peer, size_t bytes, int world, double seconds, bool ok) {
  const double busbw = seconds > 0 ? 2.0 * (world - 1) / world * double(bytes) / seconds / 1e9 : 0;
  std::printf(
      "{\"peer\":\"%s\",\"bytes\":%zu,\"ranks\":%d,\"time_us\":%.3f,\"busbw_GBps\":%.4f,"
      "\"ok\":%s}\n",
      peer, bytes, world, seconds * 1e6, busbw, ok ? "true" : "false");
  std::fflush(stdout);
}

using Clock = std::chrono::steady_clock;
inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace peers
