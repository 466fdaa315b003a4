#include "framework/core/shape.h"

#include <limits>

#include "framework/core/error.h"

namespace strata {

int64_t Shape::numel() const {
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;
  return n;
}

int64_t Shape::dim(int axis) const {
  return dims_[size_t(normalize_axis(axis, rank(), "shape.dim"))];
}

std::string Shape::to_string() const {
  std::string s = "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(dims_[i]);
  }
  return s + "]";
}

std::vector<int64_t> Shape::strides() const {
  std::vector<int64_t> s(dims_.size());
  int64_t stride = 1;
  for (int i = rank() - 1; i >= 0; --i) {
    s[size_t(i)] = stride;
    stride *= dims_[size_t(i)];
  }
  return s;
}

int normalize_axis(int axis, int rank, const char* op) {
  const int r = rank == 0 ? 1 : rank;  // scalars accept axis 0 / -1 where an op allows them
  if (axis < -r || axis >= r) {
    throw ShapeError(std::string(op) + ": axis " + std::to_string(axis) +
                     " is out of range for a tensor of rank " + std::to_string(rank));
  }
  return axis < 0 ? axis + r : axis;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const int r = std::max(a.rank(), b.rank());
  std::vector<int64_t> out(size_t(r), 1);
  for (int i = 0; i < r; ++i) {
    const int ia = a.rank() - r + i, ib = b.rank() - r + i;
    const int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1) {
      throw ShapeError(std::string(op) + ": shapes " + a.to_string() + " and " + b.to_string() +
                       " cannot be broadcast together (dimension " + std::to_string(i) +
                       ": " + std::to_string(da) + " vs " + std::to_string(db) + ")");
    }
    out[size_t(i)] = da == 1 ? db : da;
  }
  return Shape(std::move(out));
}

void check_dims(const std::vector<int64_t>& dims, const char* op) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) {
      throw ShapeError(std::string(op) + ": negative dimension in shape " +
                       Shape(dims).to_string());
    }
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / 16 / d) {
      throw ShapeError(std::string(op) + ": shape " + Shape(dims).to_string() +
                       " has too many elements");
    }
    n *= d;
  }
}

}  // namespace strata
