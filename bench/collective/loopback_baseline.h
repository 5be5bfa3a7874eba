// The loopback baseline of `dsgd bench collective`: N TCP connections on 127.0.0.1
// arranged as the ring r -> r+1, every one pumping bytes at once, one thread per node
// (as a simulated node has one thread that moves its bytes). A round carries the same
// bytes on every flow and lasts until the last flow is done: what a ring collective,
// where every rank sends as much as every other, can hope for on this machine. Not a
// network test: it measures the kernel's loopback and the CPUs, for comparison within one
// run (the bench times a round beside each iteration of the collective).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace dsgd::bench {

class LoopbackRing {
 public:
  // Connects the flows. Throws UsageError for fewer than 2, CommError if a socket fails.
  // No warm-up here: the bench's warm-up iterations run rounds too.
  explicit LoopbackRing(int flows, size_t chunk_bytes = 256 * 1024);
  ~LoopbackRing();
  LoopbackRing(const LoopbackRing&) = delete;
  LoopbackRing& operator=(const LoopbackRing&) = delete;

  int flows() const { return static_cast<int>(out_.size()); }
  // One round of bytes_per_flow on every flow, from a common start: the seconds until the
  // last node has written and read all of its bytes. Each node sends from, and receives
  // into, buffers of buffer_bytes, going round them chunk by chunk: as large as a
  // collective's buffer, so that the bytes come from memory as a collective's do, not from
  // a chunk that stays in cache. Throws CommError past 20 s.
  double round(uint64_t bytes_per_flow, size_t buffer_bytes);

 private:
  std::vector<int> out_, in_;  // node i writes out_[i] (to i+1) and reads in_[i] (from i-1)
  size_t chunk_bytes_;
  std::vector<std::vector<char>> send_buffers_, receive_buffers_;  // per node, kept
};

}  // namespace dsgd::bench
