// Tensor: an owning, contiguous, row-major float32 array with a shape.
// Deliberately small: no strides, no views, no autograd. Layers work on raw spans of it.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

namespace dsgd {

using Shape = std::vector<int64_t>;

int64_t shape_numel(const Shape& shape);
std::string shape_str(const Shape& shape);  // "(3, 4)"

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(Shape shape, float fill = 0.0f);
  Tensor(Shape shape, std::vector<float> values);  // values.size() must equal numel

  const Shape& shape() const { return shape_; }
  int64_t dim(int i) const { return shape_.at(i); }
  int64_t numel() const { return static_cast<int64_t>(data_.size()); }
  float* data() { return data_.data(); }
  const float* data() const { return data_.data(); }
  std::span<float> span() { return data_; }
  std::span<const float> span() const { return data_; }
  float& operator[](int64_t i) { return data_[i]; }
  float operator[](int64_t i) const { return data_[i]; }
  // Row-major 2-D access; the tensor must be 2-D.
  float& at(int64_t r, int64_t c) { return data_[r * shape_[1] + c]; }
  float at(int64_t r, int64_t c) const { return data_[r * shape_[1] + c]; }

 private:
  Shape shape_;
  std::vector<float> data_;
};

}  // namespace dsgd
