// CRC32C throughput (sim/crc32c.h): ISA-L, which the wire uses, and the Boost.CRC reference,
// over a buffer that fits in L2 cache (what the receiver checksums as each chunk arrives)
// and over a 64 MiB message from memory (what the sender checksums). Prints GB/s per CPU
// second (thread CPU time, so other load on the machine does not count) and per wall second.
// Usage: bench_crc32c
#include <time.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "sim/crc32c.h"

namespace {

double cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

template <typename F>
void measure(const char* name, const std::vector<uint8_t>& buffer, size_t bytes, F crc) {
  size_t total = 0;
  uint32_t sink = 0;
  const double c0 = cpu_s();
  const auto w0 = std::chrono::steady_clock::now();
  // At least 0.3 s of CPU and 256 MiB, from repeated passes (the small buffer stays hot).
  while (cpu_s() - c0 < 0.3 || total < (size_t{256} << 20)) {
    for (size_t at = 0; at + bytes <= buffer.size(); at += bytes) {
      sink ^= crc(buffer.data() + at, bytes);
      total += bytes;
    }
  }
  const double cpu = cpu_s() - c0;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  std::printf("%-10s %10zu B  %7.2f GB/s per CPU s  %7.2f GB/s wall   (crc %08x)\n", name, bytes,
              total / cpu / 1e9, total / wall / 1e9, sink);
}

}  // namespace

int main() {
  std::vector<uint8_t> buffer(size_t{64} << 20);
  std::mt19937 rng(1);
  for (auto& b : buffer)
    b = static_cast<uint8_t>(rng());
  std::printf("# CRC32C throughput\n");
  for (size_t bytes : {size_t{256} << 10, buffer.size()}) {
    measure("isa-l", buffer, bytes,
            [](const uint8_t* p, size_t n) { return dsgd::sim::crc32c(p, n); });
    measure("boost.crc", buffer, bytes,
            [](const uint8_t* p, size_t n) { return dsgd::sim::crc32c_portable(p, n); });
  }
  return 0;
}
