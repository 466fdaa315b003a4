#include "framework/autograd/indexed_slices.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "framework/backend/backend.h"
#include "framework/core/error.h"
#include "framework/ops/creation.h"
#include "framework/ops/math_ops.h"
#include "framework/ops/shape_ops.h"

namespace strata {

Shape IndexedSlices::rows_shape(const Shape& dense_shape, int64_t n) {
  if (dense_shape.rank() < 1) {
    throw ShapeError("IndexedSlices::rows_shape: a variable of shape " + dense_shape.to_string() +
                     " (a scalar) has no rows; rows and sparse gradients are for variables of "
                     "rank >= 1");
  }
  if (n < 0) {
    throw ShapeError("IndexedSlices::rows_shape: " + std::to_string(n) +
                     " rows asked of a variable of shape " + dense_shape.to_string() +
                     "; the number of rows must be >= 0");
  }
  std::vector<int64_t> dims = dense_shape.dims();
  dims[0] = n;
  return Shape(std::move(dims));
}

Tensor IndexedSlices::to_dense() const {
  Tensor dense = zeros(dense_shape, values.dtype(), values.device());
  backend_for(values).scatter_add(values, indices, 0, dense);
  return dense;
}

IndexedSlices IndexedSlices::deduplicated() const {
  // The index bookkeeping is done on the host (the indices are few: one per looked-up id);
  // the rows are summed on the values' device.
  // Slices made by hand reach the update kernels through here: they are checked first.
  if (indices.dtype() != DType::kInt64 && indices.dtype() != DType::kInt32) {
    throw DTypeError(std::string("IndexedSlices: indices must be int32 or int64, got ") +
                     dtype_name(indices.dtype()));
  }
  if (dense_shape.rank() < 1 || indices.rank() != 1 ||
      values.shape() != rows_shape(dense_shape, indices.numel())) {
    throw ShapeError("IndexedSlices: values of shape " + values.shape().to_string() + " and " +
                     "indices of shape " + indices.shape().to_string() + " do not make rows of a " +
                     "variable of shape " + dense_shape.to_string() + "; values must be [n] + " +
                     "dense_shape[1:] for n indices");
  }
  const std::vector<int64_t> ids = indices.to_vector<int64_t>();
  for (size_t j = 0; j < ids.size(); ++j) {
    if (ids[j] < 0 || ids[j] >= dense_shape[0]) {
      throw IndexError("IndexedSlices: index " + std::to_string(ids[j]) + " at position " +
                       std::to_string(j) + " is outside [0, " + std::to_string(dense_shape[0]) +
                       ") for a variable of shape " + dense_shape.to_string());
    }
  }
  std::vector<int64_t> unique(ids);
  std::sort(unique.begin(), unique.end());
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  if (unique.size() == ids.size() && std::is_sorted(ids.begin(), ids.end())) return *this;
  std::vector<int64_t> position(ids.size());
  for (size_t j = 0; j < ids.size(); ++j) {
    position[j] = std::lower_bound(unique.begin(), unique.end(), ids[j]) - unique.begin();
  }
  IndexedSlices out;
  out.dense_shape = dense_shape;
  out.indices = Tensor::from_vector(unique, Shape{int64_t(unique.size())}).to(values.device());
  out.values = zeros(rows_shape(dense_shape, int64_t(unique.size())), values.dtype(),
                     values.device());
  const Tensor where =
      Tensor::from_vector(position, Shape{int64_t(position.size())}).to(values.device());
  backend_for(values).scatter_add(values, where, 0, out.values);
  return out;
}

IndexedSlices IndexedSlices::scaled(double factor) const {
  return IndexedSlices{indices, multiply(values, factor), dense_shape};
}

IndexedSlices IndexedSlices::concat(const std::vector<IndexedSlices>& parts) {
  STRATA_CHECK(!parts.empty());
  if (parts.size() == 1) return parts[0];
  std::vector<Tensor> ids, rows;
  for (const IndexedSlices& p : parts) {
    ids.push_back(p.indices);
    rows.push_back(p.values);
  }
  return IndexedSlices{strata::concat(ids, 0), strata::concat(rows, 0), parts[0].dense_shape};
}

Gradient Gradient::shard(Tensor flat_values, int64_t begin, Shape shape) {
  STRATA_CHECK(flat_values.defined() && flat_values.rank() == 1);
  STRATA_CHECK(begin >= 0 && begin + flat_values.numel() <= shape.numel());
  Gradient g;
  g.dense_ = std::move(flat_values);
  g.shard_shape_ = std::move(shape);
  g.shard_begin_ = begin;
  g.kind_ = Kind::kShard;
  return g;
}

const IndexedSlices& Gradient::slices() const {
  STRATA_CHECK(kind_ == Kind::kSparse);
  return slices_;
}

int64_t Gradient::shard_begin() const {
  STRATA_CHECK(kind_ == Kind::kShard);
  return shard_begin_;
}

const Shape& Gradient::shape() const {
  switch (kind_) {
    case Kind::kSparse: return slices_.dense_shape;
    case Kind::kShard: return shard_shape_;
    case Kind::kDense: break;
  }
  return dense_.shape();
}

Tensor Gradient::to_dense() const {
  switch (kind_) {
    case Kind::kSparse: return slices_.to_dense();
    case Kind::kShard:
      throw StateError("Gradient::to_dense: this gradient is a shard (elements [" +
                       std::to_string(shard_begin_) + ", " +
                       std::to_string(shard_begin_ + dense_.numel()) + ") of " +
                       shard_shape_.to_string() + "); the other elements are on other replicas. "
                       "Apply it through Optimizer::apply_gradients with "
                       "skip_gradients_aggregation = true, or reduce with "
                       "GradientReduction::kAllReduce to get whole gradients");
    case Kind::kDense: break;
  }
  return dense_;
}

Gradient Gradient::scaled(double factor) const {
  switch (kind_) {
    case Kind::kSparse: return Gradient(slices_.scaled(factor));
    case Kind::kShard: return shard(multiply(dense_, factor), shard_begin_, shard_shape_);
    case Kind::kDense: break;
  }
  return dense_.defined() ? Gradient(multiply(dense_, factor)) : *this;
}

}  // namespace strata
