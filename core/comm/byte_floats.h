// Bytes in float messages. The Communicator moves floats; a few set-up messages are bytes
// (NCCL's unique id, a GPU's UUID). Each float carries two bytes as an integer 0..65535:
// exact in float32, never a NaN pattern, so any backend passes it through unchanged.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace dsgd {

// ceil(n / 2) floats; the last one holds a single byte when n is odd.
std::vector<float> bytes_to_floats(std::span<const uint8_t> bytes);

// The inverse into bytes (bytes.size() must be what bytes_to_floats was given). CommError
// for a count that does not match or a value bytes_to_floats cannot have made.
void floats_to_bytes(std::span<const float> floats, std::span<uint8_t> bytes);

}  // namespace dsgd
