// Reduction operators for collectives, named as in torch.distributed.ReduceOp.
// AVG is SUM followed by a division by the world size, done once by the collective.
#pragma once

#include <span>
#include <string>

namespace dsgd {

enum class ReduceOp { SUM, AVG, MAX, MIN, PROD };

const char* to_string(ReduceOp op);
ReduceOp parse_reduce_op(const std::string& text);  // "sum", "avg", ... (UsageError otherwise)

// a (op) b for one pair of values, AVG accumulating like SUM: the operators' definition,
// which reference results (tests, the bench's checks) fold over ranks in rank order.
float reduce_pair(float a, float b, ReduceOp op);
// acc[i] = acc[i] (op) in[i] for every i; AVG accumulates like SUM. Sizes must match.
void reduce_into(std::span<float> acc, std::span<const float> in, ReduceOp op);
// Applies what is left of `op` once the reduction is complete: AVG divides by world.
void finish_reduce(std::span<float> data, ReduceOp op, int world);

}  // namespace dsgd
