// Reduction operators for collectives, named as in torch.distributed.ReduceOp.
// AVG is SUM followed by a division by the world size, done once by the collective.
#pragma once

#include <span>
#include <string>

#include "core/comm/float16.h"

namespace dsgd {

enum class ReduceOp { SUM, AVG, MAX, MIN, PROD };

const char* to_string(ReduceOp op);
ReduceOp parse_reduce_op(const std::string& text);  // "sum", "avg", ... (UsageError otherwise)

// What a reducing collective computes: `op` over values held in `wire` (float16.h). A
// ReduceOp alone converts to a float32 reduction, so every collective takes either.
struct Reduction {
  ReduceOp op = ReduceOp::SUM;
  WireFormat wire = WireFormat::f32;
  // Phantom payloads (Communicator::phantom): the buffers hold nothing worth combining, so
  // reduce_into and finish_reduce do nothing. Set by the collectives' entry points.
  bool phantom = false;
  Reduction(ReduceOp op = ReduceOp::SUM, WireFormat wire = WireFormat::f32)  // NOLINT: implicit
      : op(op), wire(wire) {}
};

// a (op) b for one pair of values, AVG accumulating like SUM: the operators' definition,
// which reference results (tests, the bench's checks) fold over ranks in rank order.
float reduce_pair(float a, float b, ReduceOp op);
// acc[i] = acc[i] (op) in[i] for every value; AVG accumulates like SUM. Sizes must match.
// 16-bit values are combined in float32 and rounded back to 16 bits, pair by pair, as Gloo
// and NCCL sum float16 and bfloat16 tensors.
void reduce_into(std::span<float> acc, std::span<const float> in, Reduction r);
// Applies what is left of the reduction once it is complete: AVG divides by world.
void finish_reduce(std::span<float> data, Reduction r, int world);

}  // namespace dsgd
