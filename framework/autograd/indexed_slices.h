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
  // The shape of n rows of a variable of shape `dense_shape`: [n] + dense_shape[1:].
  static Shape rows_shape(const Shape& dense_shape, int64_t n);
};

// One variable's gradient: a dense tensor, or IndexedSlices. (The constructors are explicit so
// that a braced list of Tensors picks the Tensor overloads of apply_gradients unambiguously.)
class Gradient {
 public:
  Gradient() = default;
  explicit Gradient(Tensor dense) : dense_(std::move(dense)) {}
  explicit Gradient(IndexedSlices slices) : slices_(std::move(slices)), sparse_(true) {}

  bool defined() const { return sparse_ || dense_.defined(); }
  bool is_sparse() const { return sparse_; }
  // The dense tensor; undefined when sparse.
  const Tensor& dense() const { return dense_; }
  // The slices; only when is_sparse().
  const IndexedSlices& slices() const;
  // The dense value either way (a sparse one is scattered into zeros).
  Tensor to_dense() const { return sparse_ ? slices_.to_dense() : dense_; }

  // Of the variable the gradient is for (a sparse one's dense_shape).
  const Shape& shape() const { return sparse_ ? slices_.dense_shape : dense_.shape(); }
  DType dtype() const { return sparse_ ? slices_.values.dtype() : dense_.dtype(); }
  Device device() const { return sparse_ ? slices_.values.device() : dense_.device(); }
  // The tensor holding the gradient's numbers: the dense tensor or the slices' values.
  const Tensor& numbers() const { return sparse_ ? slices_.values : dense_; }

 private:
  Tensor dense_;
  IndexedSlices slices_;
  bool sparse_ = false;
};

}  // namespace strata
