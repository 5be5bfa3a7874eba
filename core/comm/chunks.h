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

}  // namespace dsgd
