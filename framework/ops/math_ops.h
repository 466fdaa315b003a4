// Elementwise math with NumPy broadcasting, comparisons, and reductions.
#pragma once

#include <vector>

#include "framework/core/tensor.h"

namespace strata {

// Binary ops broadcast; both operands must have the same dtype (no silent promotion: cast).
Tensor add(const Tensor& a, const Tensor& b);
Tensor subtract(const Tensor& a, const Tensor& b);
Tensor multiply(const Tensor& a, const Tensor& b);
Tensor divide(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
// Scalar operands take the tensor's dtype.
Tensor add(const Tensor& a, double b);
Tensor multiply(const Tensor& a, double b);
Tensor pow(const Tensor& a, double b);

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor operator+(const Tensor& a, double b);
Tensor operator-(const Tensor& a, double b);
Tensor operator*(const Tensor& a, double b);
Tensor operator/(const Tensor& a, double b);
Tensor operator+(double a, const Tensor& b);
Tensor operator-(double a, const Tensor& b);
Tensor operator*(double a, const Tensor& b);
Tensor operator/(double a, const Tensor& b);

Tensor negative(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor sign(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor log1p(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor square(const Tensor& x);
Tensor reciprocal(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor floor(const Tensor& x);
Tensor ceil(const Tensor& x);
Tensor round(const Tensor& x);
Tensor clip_by_value(const Tensor& x, double lo, double hi);

// Comparisons and logic: bool results, not differentiable.
Tensor equal(const Tensor& a, const Tensor& b);
Tensor not_equal(const Tensor& a, const Tensor& b);
Tensor less(const Tensor& a, const Tensor& b);
Tensor less_equal(const Tensor& a, const Tensor& b);
Tensor greater(const Tensor& a, const Tensor& b);
Tensor greater_equal(const Tensor& a, const Tensor& b);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_not(const Tensor& x);
Tensor is_nan(const Tensor& x);
Tensor is_finite(const Tensor& x);
// cond (bool) ? a : b with broadcasting; differentiable w.r.t. a and b.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);

// Reductions over `axes` (all axes when empty), TensorFlow names and semantics.
Tensor reduce_sum(const Tensor& x, std::vector<int> axes = {}, bool keepdims = false);
Tensor reduce_mean(const Tensor& x, std::vector<int> axes = {}, bool keepdims = false);
Tensor reduce_max(const Tensor& x, std::vector<int> axes = {}, bool keepdims = false);
Tensor reduce_min(const Tensor& x, std::vector<int> axes = {}, bool keepdims = false);
Tensor reduce_prod(const Tensor& x, std::vector<int> axes = {}, bool keepdims = false);
Tensor reduce_any(const Tensor& x, std::vector<int> axes = {}, bool keepdims = false);
Tensor reduce_all(const Tensor& x, std::vector<int> axes = {}, bool keepdims = false);
Tensor argmax(const Tensor& x, int axis = -1);  // int64
Tensor argmin(const Tensor& x, int axis = -1);  // int64
// sqrt(sum(x^2)) over all elements, and over a list of tensors.
Tensor norm(const Tensor& x);
Tensor global_norm(const std::vector<Tensor>& xs);

// Sums a broadcast gradient back to `shape` (the reverse of broadcasting).
Tensor sum_to_shape(const Tensor& x, const Shape& shape);

}  // namespace strata
