// Sparse gradients (TensorFlow's tf.IndexedSlices) and the Gradient that is either dense or
// sparse. A table read through Variable::gather (Embedding) has a gradient only in the rows a
// step looked up: as IndexedSlices it travels as those rows, so a table kept elsewhere (sharded,
// on a parameter server) receives and updates only them, and a large table is never written as
// a dense table-sized gradient.
//
//   GradientTape tape;
//   Tensor loss = ...;                                     // reads table->gather(ids)
//   std::vector<Gradient> g = tape.gradient_with_slices(loss, vars);
//   g[0].is_sparse();                                      // true for the table
//   optimizer->apply_gradients(g, vars);                   // applied to the touched rows
#pragma once

#include "framework/core/tensor.h"

namespace strata {

struct IndexedSlices {
  Tensor indices;     // int64 [n]: rows of the dense value, possibly repeated
  Tensor values;      // [n, dense_shape[1], ...]: the gradient of each listed row
  Shape dense_shape;  // the shape of the variable the rows belong to

  // The dense gradient: zeros with `values` added at `indices` (repeats add up).
  Tensor to_dense() const;
  // Sorted, unique indices with the rows of repeated ones summed (TensorFlow's
  // _deduplicate_indexed_slices): what a row-wise update must see.
  IndexedSlices deduplicated() const;
  // `values` times `factor` (loss-scale unscaling, averaging over replicas).
  IndexedSlices scaled(double factor) const;
  // Rows of several slices of one variable together (not deduplicated).
  static IndexedSlices concat(const std::vector<IndexedSlices>& parts);
  // The shape of n rows of a variable of shape `dense_shape`: [n] + dense_shape[1:]. ShapeError
  // for a scalar `dense_shape` (it has no rows) or a negative n.
  static Shape rows_shape(const Shape& dense_shape, int64_t n);
};

// One variable's gradient: a dense tensor, IndexedSlices, or a shard. (The constructors are
// explicit so that a braced list of Tensors picks the Tensor overloads of apply_gradients
// unambiguously.)
//
// A shard is one replica's part of a reduce-scattered dense gradient: the elements
// [shard_begin(), shard_begin() + numbers().numel()) of the gradient flattened in row-major
// order, summed over the replicas; the other elements went to the other replicas, which update
// them (gradient_reducer.h). It has the variable's shape() but no dense value on its own.
class Gradient {
 public:
  Gradient() = default;
  explicit Gradient(Tensor dense) : dense_(std::move(dense)) {}
  explicit Gradient(IndexedSlices slices) : slices_(std::move(slices)), kind_(Kind::kSparse) {}
  // `flat_values`: rank 1 (possibly empty), elements [begin, begin + numel) of a gradient of
  // `shape`. The range must lie within shape.numel().
  static Gradient shard(Tensor flat_values, int64_t begin, Shape shape);

  bool defined() const { return kind_ != Kind::kDense || dense_.defined(); }
  bool is_sparse() const { return kind_ == Kind::kSparse; }
  bool is_shard() const { return kind_ == Kind::kShard; }
  // The dense tensor; undefined when sparse or a shard.
  const Tensor& dense() const { return dense_; }
  // The slices; only when is_sparse().
  const IndexedSlices& slices() const;
  // Where a shard's elements start in the flattened gradient; only when is_shard().
  int64_t shard_begin() const;
  // The dense value (a sparse one is scattered into zeros). A shard has none: StateError.
  Tensor to_dense() const;
  // Every number times `factor`, in the same form (loss-scale unscaling).
  Gradient scaled(double factor) const;

  // Of the variable the gradient is for (a sparse one's dense_shape, a shard's whole shape).
  const Shape& shape() const;
  DType dtype() const { return numbers().dtype(); }
  Device device() const { return numbers().device(); }
  // The tensor holding the gradient's numbers: the dense tensor, the slices' values, or the
  // shard's flat elements.
  const Tensor& numbers() const { return kind_ == Kind::kSparse ? slices_.values : dense_; }

 private:
  enum class Kind { kDense, kSparse, kShard };
  Tensor dense_;  // dense: the gradient; shard: its flat elements
  IndexedSlices slices_;
  Shape shard_shape_;
  int64_t shard_begin_ = 0;
  Kind kind_ = Kind::kDense;
};

}  // namespace strata
