// A tensor's dimensions, outermost first (row-major).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace strata {

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  explicit Shape(std::vector<int64_t> dims) : dims_(std::move(dims)) {}

  int rank() const { return int(dims_.size()); }
  int64_t numel() const;  // product of dims; 1 for a scalar
  int64_t operator[](int i) const { return dims_[size_t(i)]; }
  int64_t& operator[](int i) { return dims_[size_t(i)]; }
  // Dimension with Python-style negative indexing; throws ShapeError when out of range.
  int64_t dim(int axis) const;
  const std::vector<int64_t>& dims() const { return dims_; }
  std::vector<int64_t>::const_iterator begin() const { return dims_.begin(); }
  std::vector<int64_t>::const_iterator end() const { return dims_.end(); }

  bool operator==(const Shape& o) const { return dims_ == o.dims_; }
  bool operator!=(const Shape& o) const { return dims_ != o.dims_; }

  std::string to_string() const;  // "[64,784]"; "[]" for a scalar

  // Row-major strides in elements.
  std::vector<int64_t> strides() const;

 private:
  std::vector<int64_t> dims_;
};

// Resolves a possibly negative axis against `rank`; throws ShapeError naming `op` when invalid.
int normalize_axis(int axis, int rank, const char* op);

// NumPy broadcasting of two shapes; throws ShapeError naming `op` when they don't broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

// Validates user-given dims (no negatives, no overflow) for `op`.
void check_dims(const std::vector<int64_t>& dims, const char* op);

}  // namespace strata
