#include "core/comm/reduce_op.h"

#include <algorithm>
#include <stdexcept>

#include "core/errors.h"

namespace dsgd {

const char* to_string(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM:
      return "sum";
    case ReduceOp::AVG:
      return "avg";
    case ReduceOp::MAX:
      return "max";
    case ReduceOp::MIN:
      return "min";
    case ReduceOp::PROD:
      return "prod";
  }
  return "?";
}

ReduceOp parse_reduce_op(const std::string& text) {
  std::string t = text;
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
  if (t == "sum") return ReduceOp::SUM;
  if (t == "avg") return ReduceOp::AVG;
  if (t == "max") return ReduceOp::MAX;
  if (t == "min") return ReduceOp::MIN;
  if (t == "prod") return ReduceOp::PROD;
  throw UsageError("unknown reduce op '" + text + "': use sum, avg, max, min or prod");
}

float reduce_pair(float a, float b, ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM:
    case ReduceOp::AVG:
      return a + b;
    case ReduceOp::MAX:
      return std::max(a, b);
    case ReduceOp::MIN:
      return std::min(a, b);
    case ReduceOp::PROD:
      return a * b;
  }
  return a;
}

void reduce_into(std::span<float> acc, std::span<const float> in, ReduceOp op) {
  if (acc.size() != in.size())
    throw std::logic_error("reduce_into: " + std::to_string(acc.size()) + " vs " +
                           std::to_string(in.size()) + " elements");
  float* a = acc.data();
  const float* b = in.data();
  const size_t n = acc.size();
  // Plain loops the compiler vectorises; one switch outside the loop, not per element.
  switch (op) {
    case ReduceOp::SUM:
    case ReduceOp::AVG:
      for (size_t i = 0; i < n; ++i)
        a[i] += b[i];
      break;
    case ReduceOp::MAX:
      for (size_t i = 0; i < n; ++i)
        a[i] = std::max(a[i], b[i]);
      break;
    case ReduceOp::MIN:
      for (size_t i = 0; i < n; ++i)
        a[i] = std::min(a[i], b[i]);
      break;
    case ReduceOp::PROD:
      for (size_t i = 0; i < n; ++i)
        a[i] *= b[i];
      break;
  }
}

void finish_reduce(std::span<float> data, ReduceOp op, int world) {
  if (op != ReduceOp::AVG || world <= 1) return;
  // Divide rather than multiply by 1/world: the same rounding as torch's AVG.
  const float w = static_cast<float>(world);
  for (float& v : data)
    v /= w;
}

}  // namespace dsgd
