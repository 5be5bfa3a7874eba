// How a PyTorch tensor travels on dsgd's wire, which moves float32s: its bytes, four to a
// float, unchanged (any backend copies floats it does not reduce bit for bit), viewed in
// place when the tensor is contiguous and whole floats long, else through a copy. And how
// its values are reduced: float32, float16 and bfloat16 by dsgd's own reducing collectives
// (reduce_op.h's Reduction); float64 and the integer types, which the float32 wire cannot
// add, by gathering every rank's values (dsgd's all_gather) and folding them in rank order.
#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/comm/reduce_op.h"

namespace dsgd::pytorch {

// TORCH_CHECK (a Python RuntimeError) naming `op` unless the tensor is a dense CPU tensor of
// a type the backend moves: float32, float64, float16, bfloat16, int32, int64, int8, uint8.
void check_tensor(const at::Tensor& t, const char* op);

// Floats that hold the tensor's bytes: ceil(bytes / 4).
size_t wire_floats(const at::Tensor& t);

// The tensor's bytes as floats: in place where possible, else copied into `staging` (then
// put_back() writes them into the tensor once they changed).
class WireView {
 public:
  explicit WireView(at::Tensor t);
  std::span<float> floats() { return floats_; }
  void put_back();  // after a receive or a reduction into floats()

 private:
  at::Tensor tensor_;
  std::vector<float> staging_;
  std::span<float> floats_;
};

// Copies `floats` (wire_floats(t) of them) into the tensor's bytes.
void copy_from_wire(std::span<const float> floats, at::Tensor& t);

// dsgd's ReduceOp for PyTorch's; TORCH_CHECK names the op for BAND, BOR, BXOR, PREMUL_SUM.
ReduceOp reduce_op(const c10d::ReduceOp& op, const char* collective);
// The Reduction dsgd's collectives compute for this type, or nullopt for the types reduced
// by gathering (fold_rows).
std::optional<Reduction> wire_reduction(at::ScalarType type, ReduceOp op);
// Rows 0..R-1 of `rows` (R x numel, the ranks' values) folded in rank order with `op`;
// AVG divides by R (TORCH_CHECK for an integer type, as torch cannot average integers).
at::Tensor fold_rows(const at::Tensor& rows, ReduceOp op);

}  // namespace dsgd::pytorch
