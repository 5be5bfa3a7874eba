// Chunks: how the ring and halving-doubling algorithms (and their cost model) cut a buffer
// of C elements into `parts` contiguous pieces whose sizes differ by at most one.
// Not an allocator: it only computes offsets; the first C mod parts pieces get one extra.
#pragma once

#include <algorithm>
#include <cstddef>

namespace dsgd {

struct Chunks {
  size_t count;  // C, elements in the whole buffer
  int parts;     // pieces; must be >= 1
  // First element of piece i (i may equal parts: then it is C).
  size_t offset(int i) const {
    const size_t base = count / parts, extra = count % parts;
    return i * base + std::min<size_t>(i, extra);
  }
  size_t size(int i) const { return offset(i + 1) - offset(i); }
  // Elements in pieces [first, last).
  size_t span_size(int first, int last) const { return offset(last) - offset(first); }
  size_t max_size() const { return (count + parts - 1) / parts; }
};

// The ring all-reduce sends a chunk of more than this many elements (4 MiB of floats) as
// several messages of at most this size, so that it can pipeline them (allreduce_ring.cpp).
inline constexpr size_t kRingSegmentFloats = size_t{1} << 20;

// How many messages a ring chunk of `floats` elements travels in: 1 up to the segment size.
inline int ring_segments(size_t floats) {
  return static_cast<int>(
      std::max<size_t>(1, (floats + kRingSegmentFloats - 1) / kRingSegmentFloats));
}

}  // namespace dsgd
