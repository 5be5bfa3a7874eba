#include "pytorch/tensor_wire.h"

#include <cstdint>
#include <cstring>

namespace dsgd::pytorch {

void check_tensor(const at::Tensor& t, const char* op) {
  TORCH_CHECK(t.device().is_cpu(), "dsgd backend: ", op, " takes CPU tensors (got ", t.device(),
              "); move it with .cpu()");
  TORCH_CHECK(t.layout() == at::kStrided, "dsgd backend: ", op, " takes dense tensors");
  switch (t.scalar_type()) {
    case at::kFloat:
    case at::kDouble:
    case at::kHalf:
    case at::kBFloat16:
    case at::kInt:
    case at::kLong:
    case at::kChar:
    case at::kByte:
      return;
    default:
      TORCH_CHECK(false, "dsgd backend: ", op, " does not support ", t.scalar_type(),
                  " tensors (float32, float64, float16, bfloat16, int8, uint8, int32, int64)");
  }
}

size_t wire_floats(const at::Tensor& t) {
  return (t.numel() * t.element_size() + sizeof(float) - 1) / sizeof(float);
}

WireView::WireView(at::Tensor t) : tensor_(std::move(t)) {
  const size_t bytes = tensor_.numel() * tensor_.element_size();
  const auto address = reinterpret_cast<uintptr_t>(tensor_.data_ptr());
  if (tensor_.is_contiguous() && bytes % sizeof(float) == 0 && address % alignof(float) == 0) {
    floats_ = std::span(static_cast<float*>(tensor_.data_ptr()), bytes / sizeof(float));
    return;
  }
  staging_.assign(wire_floats(tensor_), 0.0f);
  const at::Tensor dense = tensor_.contiguous();
  std::memcpy(staging_.data(), dense.data_ptr(), bytes);
  floats_ = staging_;
}

void WireView::put_back() {
  if (!staging_.empty()) copy_from_wire(staging_, tensor_);
}

void copy_from_wire(std::span<const float> floats, at::Tensor& t) {
  const size_t bytes = t.numel() * t.element_size();
  TORCH_CHECK(floats.size() * sizeof(float) >= bytes, "dsgd backend: a message is too short");
  if (t.is_contiguous()) {
    std::memcpy(t.data_ptr(), floats.data(), bytes);
    return;
  }
  at::Tensor dense = at::empty(t.sizes(), t.options());
  std::memcpy(dense.data_ptr(), floats.data(), bytes);
  t.copy_(dense);
}

ReduceOp reduce_op(const c10d::ReduceOp& op, const char* collective) {
  switch (op.op_) {
    case c10d::ReduceOp::SUM:
      return ReduceOp::SUM;
    case c10d::ReduceOp::AVG:
      return ReduceOp::AVG;
    case c10d::ReduceOp::PRODUCT:
      return ReduceOp::PROD;
    case c10d::ReduceOp::MIN:
      return ReduceOp::MIN;
    case c10d::ReduceOp::MAX:
      return ReduceOp::MAX;
    default:
      TORCH_CHECK(false, "dsgd backend: ", collective,
                  " does not support this ReduceOp (SUM, AVG, PRODUCT, MIN and MAX are supported)");
  }
}

std::optional<Reduction> wire_reduction(at::ScalarType type, ReduceOp op) {
  switch (type) {
    case at::kFloat:
      return Reduction(op, WireFormat::f32);
    case at::kHalf:
      return Reduction(op, WireFormat::f16);
    case at::kBFloat16:
      return Reduction(op, WireFormat::bf16);
    default:
      return std::nullopt;
  }
}

at::Tensor fold_rows(const at::Tensor& rows, ReduceOp op) {
  const int64_t world = rows.size(0);
  at::Tensor acc = rows[0].clone();
  for (int64_t r = 1; r < world; ++r) {
    const at::Tensor row = rows[r];
    switch (op) {
      case ReduceOp::SUM:
      case ReduceOp::AVG:
        acc.add_(row);
        break;
      case ReduceOp::PROD:
        acc.mul_(row);
        break;
      case ReduceOp::MIN:
        acc = at::minimum(acc, row);
        break;
      case ReduceOp::MAX:
        acc = at::maximum(acc, row);
        break;
    }
  }
  if (op == ReduceOp::AVG) {
    TORCH_CHECK(at::isFloatingType(acc.scalar_type()), "dsgd backend: ReduceOp.AVG of ",
                acc.scalar_type(), " tensors: integers cannot be averaged; use SUM and divide");
    acc.div_(world);
  }
  return acc;
}

}  // namespace dsgd::pytorch
