// Shape and data-movement ops. All differentiable ones record their gradient.
#pragma once

#include <cstdint>
#include <vector>

#include "framework/core/tensor.h"

namespace strata {

// Views (no copy).
Tensor reshape(const Tensor& x, const Shape& shape);  // one dim may be -1
Tensor squeeze(const Tensor& x, std::vector<int> axes = {});  // all size-1 dims when empty
Tensor expand_dims(const Tensor& x, int axis);
Tensor flatten(const Tensor& x);  // [N, ...] -> [N, prod(...)]

// Copies.
Tensor transpose(const Tensor& x, std::vector<int> perm = {});  // reverse dims when empty
Tensor concat(const std::vector<Tensor>& xs, int axis);
Tensor stack(const std::vector<Tensor>& xs, int axis = 0);
// Splits into `num` equal parts, or into parts of the given sizes (one may be -1).
std::vector<Tensor> split(const Tensor& x, int num, int axis = 0);
std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int axis = 0);
// x[begin[i] : begin[i]+size[i]] on each axis; size -1 means "to the end".
Tensor slice(const Tensor& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& size);
// paddings: one {before, after} pair per axis; constant mode.
Tensor pad(const Tensor& x, const std::vector<std::pair<int64_t, int64_t>>& paddings,
           double constant_value = 0.0);
// params gathered at integer `indices` along `axis` (differentiable w.r.t. params).
// Out-of-range indices throw IndexError.
Tensor gather(const Tensor& params, const Tensor& indices, int axis = 0);
// Integer indices -> one-hot floats of width `depth` appended as the last axis.
Tensor one_hot(const Tensor& indices, int64_t depth, double on_value = 1.0,
               double off_value = 0.0, DType dtype = float32);
// Converts dtype; differentiable between floating dtypes.
Tensor cast(const Tensor& x, DType dtype);
Tensor broadcast_to(const Tensor& x, const Shape& shape);
// Stops gradients (TensorFlow's stop_gradient).
Tensor stop_gradient(const Tensor& x);
// Copies to another device; the gradient is copied back.
Tensor to_device(const Tensor& x, Device device);

}  // namespace strata
