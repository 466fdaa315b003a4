// Shape and data-movement ops: views (reshape, squeeze, expand_dims, flatten) share storage;
// everything else copies through a backend kernel. All record gradients where differentiable.
#include "framework/ops/shape_ops.h"

#include <algorithm>
#include <limits>
#include <string>

#include "framework/autograd/grad_mode.h"
#include "framework/autograd/node.h"
#include "framework/backend/backend.h"
#include "framework/ops/creation.h"
#include "framework/ops/math_ops.h"
#include "framework/ops/op_checks.h"
#include "framework/ops/op_util.h"

namespace strata {
namespace {

using namespace ops_detail;
using autograd::NeedsGrad;

std::string join(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// Records a view's gradient: reshape the incoming gradient back to x's shape.
Tensor recorded_view(const Tensor& x, const Shape& shape, const char* name) {
  Tensor out = detached_view(x, shape);
  autograd::record(out, name, {x}, [xs = x.shape()](const Tensor& g, const NeedsGrad&) {
    return std::vector<Tensor>{reshape(g, xs)};
  });
  return out;
}

// Integers a pad / fill value must fit so that writing it is well defined.
void check_value_fits(double value, DType dtype, const char* op) {
  if (!is_integral(dtype)) return;
  const auto [lo, hi] = integral_range(dtype);
  if (!(value >= lo && value <= hi)) {
    throw ValueError(std::string(op) + ": value " + std::to_string(value) + " does not fit dtype " +
                     dtype_name(dtype));
  }
}

// params.shape[:axis] + indices.shape + params.shape[axis+1:]
Shape gather_shape(const Shape& params, const Shape& indices, int axis) {
  std::vector<int64_t> dims(params.begin(), params.begin() + axis);
  dims.insert(dims.end(), indices.begin(), indices.end());
  dims.insert(dims.end(), params.begin() + axis + 1, params.end());
  return Shape(std::move(dims));
}

// Zeros of `shape` with `updates` scatter-added along `axis` at `indices`.
Tensor scatter_add_into_zeros(const Tensor& updates, const Tensor& indices, int axis,
                              const Shape& shape) {
  Tensor out = zeros(shape, updates.dtype(), updates.device());
  backend_for(updates).scatter_add(updates, indices, axis, out);
  return out;
}

}  // namespace

// ---- views --------------------------------------------------------------------------------

Tensor reshape(const Tensor& x, const Shape& shape) {
  check_defined(x, "reshape");
  std::vector<int64_t> dims = shape.dims();
  int inferred = -1;
  int64_t known = 1;
  for (int i = 0; i < int(dims.size()); ++i) {
    if (dims[size_t(i)] == -1) {
      if (inferred >= 0) {
        throw ShapeError("reshape: at most one dimension may be -1, got " + shape.to_string());
      }
      inferred = i;
    } else if (dims[size_t(i)] < 0) {
      throw ShapeError("reshape: negative dimension in target shape " + shape.to_string());
    }
  }
  {
    std::vector<int64_t> rest;
    for (int64_t d : dims) if (d != -1) rest.push_back(d);
    check_dims(rest, "reshape");
    for (int64_t d : rest) known *= d;
  }
  if (inferred >= 0) {
    if (known == 0 || x.numel() % known != 0) {
      throw ShapeError("reshape: cannot reshape " + x.shape().to_string() + " (" +
                       std::to_string(x.numel()) + " elements) into " + shape.to_string());
    }
    dims[size_t(inferred)] = x.numel() / known;
  }
  const Shape target(std::move(dims));
  if (target.numel() != x.numel()) {
    throw ShapeError("reshape: cannot reshape " + x.shape().to_string() + " (" +
                     std::to_string(x.numel()) + " elements) into " + shape.to_string() + " (" +
                     std::to_string(target.numel()) + " elements)");
  }
  return recorded_view(x, target, "reshape");
}

Tensor squeeze(const Tensor& x, std::vector<int> axes) {
  check_defined(x, "squeeze");
  std::vector<bool> drop(size_t(x.rank()), false);
  if (axes.empty()) {
    for (int i = 0; i < x.rank(); ++i) drop[size_t(i)] = x.shape()[i] == 1;
  } else {
    for (int a : axes) {
      const int i = normalize_axis(a, x.rank(), "squeeze");
      if (x.rank() == 0) continue;
      if (x.shape()[i] != 1) {
        throw ShapeError("squeeze: axis " + std::to_string(a) + " of shape " + x.shape().to_string() +
                         " has size " + std::to_string(x.shape()[i]) + ", expected 1");
      }
      drop[size_t(i)] = true;
    }
  }
  std::vector<int64_t> dims;
  for (int i = 0; i < x.rank(); ++i) {
    if (!drop[size_t(i)]) dims.push_back(x.shape()[i]);
  }
  return recorded_view(x, Shape(std::move(dims)), "squeeze");
}

Tensor expand_dims(const Tensor& x, int axis) {
  check_defined(x, "expand_dims");
  const int r = x.rank();
  if (axis < -(r + 1) || axis > r) {
    throw ShapeError("expand_dims: axis " + std::to_string(axis) + " is out of range for a tensor of rank " +
                     std::to_string(r) + " (expected -" + std::to_string(r + 1) + " to " + std::to_string(r) + ")");
  }
  const int a = axis < 0 ? axis + r + 1 : axis;
  std::vector<int64_t> dims = x.shape().dims();
  dims.insert(dims.begin() + a, 1);
  return recorded_view(x, Shape(std::move(dims)), "expand_dims");
}

Tensor flatten(const Tensor& x) {
  check_defined(x, "flatten");
  if (x.rank() == 0) throw ShapeError("flatten: expected a tensor of rank >= 1, got a scalar");
  const int64_t n = x.shape()[0];
  int64_t rest = 1;
  for (int i = 1; i < x.rank(); ++i) rest *= x.shape()[i];
  return recorded_view(x, Shape{n, rest}, "flatten");
}

// ---- copies -------------------------------------------------------------------------------

Tensor transpose(const Tensor& x, std::vector<int> perm) {
  check_defined(x, "transpose");
  const int r = x.rank();
  if (perm.empty()) {
    for (int i = r - 1; i >= 0; --i) perm.push_back(i);
  }
  std::vector<int> sorted = perm;
  for (int& p : sorted) p = p < 0 ? p + r : p;
  std::sort(sorted.begin(), sorted.end());
  bool valid = int(perm.size()) == r;
  for (int i = 0; valid && i < r; ++i) valid = sorted[size_t(i)] == i;
  if (!valid) {
    std::vector<int64_t> p(perm.begin(), perm.end());
    throw ShapeError("transpose: perm " + join(p) + " is not a permutation of the " +
                     std::to_string(r) + " axes of shape " + x.shape().to_string());
  }
  for (int& p : perm) p = p < 0 ? p + r : p;
  std::vector<int64_t> dims(static_cast<size_t>(r));
  for (int i = 0; i < r; ++i) dims[size_t(i)] = x.shape()[perm[size_t(i)]];
  Tensor out = Tensor::empty(Shape(std::move(dims)), x.dtype(), x.device());
  backend_for(x).transpose(x, perm, out);
  autograd::record(out, "transpose", {x}, [perm](const Tensor& g, const NeedsGrad&) {
    std::vector<int> inverse(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) inverse[size_t(perm[i])] = int(i);
    return std::vector<Tensor>{transpose(g, inverse)};
  });
  return out;
}

Tensor concat(const std::vector<Tensor>& xs, int axis) {
  if (xs.empty()) throw ValueError("concat: expected at least one tensor, got none");
  for (const Tensor& x : xs) check_defined(x, "concat");
  const Tensor& first = xs[0];
  if (first.rank() == 0) throw ShapeError("concat: cannot concatenate scalars; use stack");
  const int a = normalize_axis(axis, first.rank(), "concat");
  std::vector<int64_t> dims = first.shape().dims();
  int64_t total = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Tensor& x = xs[i];
    check_same_device(first, x, "concat");
    if (x.dtype() != first.dtype()) {
      throw DTypeError(std::string("concat: dtypes differ: ") + dtype_name(first.dtype()) + " vs " +
                       dtype_name(x.dtype()) + " (tensor " + std::to_string(i) + ")");
    }
    bool ok = x.rank() == first.rank();
    for (int d = 0; ok && d < x.rank(); ++d) ok = d == a || x.shape()[d] == first.shape()[d];
    if (!ok) {
      throw ShapeError("concat: shapes " + first.shape().to_string() + " and " + x.shape().to_string() +
                       " (tensor " + std::to_string(i) + ") differ outside axis " + std::to_string(axis));
    }
    total += x.shape()[a];
  }
  dims[size_t(a)] = total;
  check_dims(dims, "concat");
  Tensor out = Tensor::empty(Shape(dims), first.dtype(), first.device());
  backend_for(first).concat(xs, a, out);
  std::vector<int64_t> sizes;
  for (const Tensor& x : xs) sizes.push_back(x.shape()[a]);
  autograd::record(out, "concat", xs, [sizes, a](const Tensor& g, const NeedsGrad& needs) {
    std::vector<Tensor> grads(sizes.size());
    std::vector<int64_t> begin(size_t(g.rank()), 0), size = g.shape().dims();
    for (size_t i = 0; i < sizes.size(); ++i) {
      size[size_t(a)] = sizes[i];
      if (needs[i]) grads[i] = slice(g, begin, size);
      begin[size_t(a)] += sizes[i];
    }
    return grads;
  });
  return out;
}

Tensor stack(const std::vector<Tensor>& xs, int axis) {
  if (xs.empty()) throw ValueError("stack: expected at least one tensor, got none");
  for (const Tensor& x : xs) check_defined(x, "stack");
  const int r = xs[0].rank();
  if (axis < -(r + 1) || axis > r) {
    throw ShapeError("stack: axis " + std::to_string(axis) + " is out of range for stacking tensors of rank " +
                     std::to_string(r));
  }
  std::vector<Tensor> expanded;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (xs[i].shape() != xs[0].shape()) {
      throw ShapeError("stack: all tensors must have the same shape; tensor 0 has " +
                       xs[0].shape().to_string() + " but tensor " + std::to_string(i) + " has " +
                       xs[i].shape().to_string());
    }
    expanded.push_back(expand_dims(xs[i], axis));
  }
  return concat(expanded, axis < 0 ? axis + r + 1 : axis);
}

std::vector<Tensor> split(const Tensor& x, int num, int axis) {
  check_defined(x, "split");
  if (x.rank() == 0) throw ShapeError("split: cannot split a scalar");
  const int a = normalize_axis(axis, x.rank(), "split");
  const int64_t d = x.shape()[a];
  if (num <= 0 || d % num != 0) {
    throw ValueError("split: axis " + std::to_string(axis) + " of shape " + x.shape().to_string() +
                     " (size " + std::to_string(d) + ") cannot be split into " + std::to_string(num) +
                     " equal parts");
  }
  return split(x, std::vector<int64_t>(size_t(num), d / num), a);
}

std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int axis) {
  check_defined(x, "split");
  if (x.rank() == 0) throw ShapeError("split: cannot split a scalar");
  const int a = normalize_axis(axis, x.rank(), "split");
  const int64_t d = x.shape()[a];
  std::vector<int64_t> parts = sizes;
  int inferred = -1;
  int64_t known = 0;
  bool valid = !parts.empty();
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i] == -1 && inferred < 0) {
      inferred = int(i);
    } else if (parts[i] < 0 || parts[i] > d - known) {
      valid = false;
      break;
    } else {
      known += parts[i];
    }
  }
  if (valid && inferred >= 0) parts[size_t(inferred)] = d - known;
  else if (valid && known != d) valid = false;
  if (!valid) {
    throw ValueError("split: sizes " + join(sizes) + " do not add up to size " + std::to_string(d) +
                     " of axis " + std::to_string(axis) + " of shape " + x.shape().to_string());
  }
  std::vector<Tensor> out;
  std::vector<int64_t> begin(size_t(x.rank()), 0), size = x.shape().dims();
  for (int64_t p : parts) {
    size[size_t(a)] = p;
    out.push_back(slice(x, begin, size));
    begin[size_t(a)] += p;
  }
  return out;
}

Tensor slice(const Tensor& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& size) {
  check_defined(x, "slice");
  const int r = x.rank();
  if (int(begin.size()) != r || int(size.size()) != r) {
    throw ShapeError("slice: begin " + join(begin) + " and size " + join(size) +
                     " must have one entry per axis of shape " + x.shape().to_string());
  }
  std::vector<int64_t> dims(static_cast<size_t>(r));
  for (int i = 0; i < r; ++i) {
    const int64_t d = x.shape()[i], b = begin[size_t(i)], s = size[size_t(i)];
    const bool ok = b >= 0 && b <= d && (s == -1 || (s >= 0 && s <= d - b));
    if (!ok) {
      throw IndexError("slice: begin " + join(begin) + " size " + join(size) +
                       " is outside shape " + x.shape().to_string() + " on axis " + std::to_string(i));
    }
    dims[size_t(i)] = s == -1 ? d - b : s;
  }
  Tensor out = Tensor::empty(Shape(std::move(dims)), x.dtype(), x.device());
  backend_for(x).slice(x, begin, out);
  autograd::record(out, "slice", {x}, [xs = x.shape(), begin](const Tensor& g, const NeedsGrad&) {
    // The gradient is g placed back at `begin` in zeros: a pad.
    std::vector<std::pair<int64_t, int64_t>> paddings;
    for (int i = 0; i < xs.rank(); ++i) {
      paddings.push_back({begin[size_t(i)], xs[i] - begin[size_t(i)] - g.shape()[i]});
    }
    return std::vector<Tensor>{pad(g, paddings)};
  });
  return out;
}

Tensor pad(const Tensor& x, const std::vector<std::pair<int64_t, int64_t>>& paddings,
           double constant_value) {
  check_defined(x, "pad");
  const int r = x.rank();
  if (int(paddings.size()) != r) {
    throw ShapeError("pad: expected " + std::to_string(r) + " {before, after} pairs for shape " +
                     x.shape().to_string() + ", got " + std::to_string(paddings.size()));
  }
  check_value_fits(constant_value, x.dtype(), "pad");
  std::vector<int64_t> dims(static_cast<size_t>(r)), before(static_cast<size_t>(r));
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max() / 4;
  for (int i = 0; i < r; ++i) {
    const auto [b, a] = paddings[size_t(i)];
    if (b < 0 || a < 0 || b > kMax || a > kMax) {
      throw ValueError("pad: paddings must be non-negative, got {" + std::to_string(b) + ", " +
                       std::to_string(a) + "} for axis " + std::to_string(i));
    }
    before[size_t(i)] = b;
    dims[size_t(i)] = b + x.shape()[i] + a;
  }
  check_dims(dims, "pad");
  Tensor out = Tensor::empty(Shape(std::move(dims)), x.dtype(), x.device());
  backend_for(x).pad(x, before, constant_value, out);
  autograd::record(out, "pad", {x}, [xs = x.shape(), before](const Tensor& g, const NeedsGrad&) {
    return std::vector<Tensor>{slice(g, before, xs.dims())};
  });
  return out;
}

Tensor gather(const Tensor& params, const Tensor& indices, int axis) {
  check_defined(params, "gather");
  check_defined(indices, "gather");
  check_same_device(params, indices, "gather");
  check_index_dtype(indices, "gather");
  if (params.rank() == 0) throw ShapeError("gather: params must have rank >= 1, got a scalar");
  const int a = normalize_axis(axis, params.rank(), "gather");
  const int64_t n = params.shape()[a];
  const std::vector<int64_t> ids = ops_detail::index_values_to_check(indices);
  for (size_t j = 0; j < ids.size(); ++j) {
    if (ids[j] < 0 || ids[j] >= n) {
      throw IndexError("gather: index " + std::to_string(ids[j]) + " at position " +
                       std::to_string(j) + " is outside [0, " + std::to_string(n) + ") for axis " +
                       std::to_string(axis) + " of params shape " + params.shape().to_string());
    }
  }
  const Shape shape = gather_shape(params.shape(), indices.shape(), a);
  check_dims(shape.dims(), "gather");
  Tensor out = Tensor::empty(shape, params.dtype(), params.device());
  backend_for(params).gather(params, indices, a, out);
  if (autograd::any_requires_grad({params})) {
    autograd::record(out, "gather", {params, indices},
                     [ps = params.shape(), idx = indices.alias(), a](const Tensor& g, const NeedsGrad&) {
                       return std::vector<Tensor>{scatter_add_into_zeros(g, idx, a, ps), Tensor()};
                     });
  }
  return out;
}

Tensor one_hot(const Tensor& indices, int64_t depth, double on_value, double off_value, DType dtype) {
  check_defined(indices, "one_hot");
  check_index_dtype(indices, "one_hot");
  if (depth < 0) throw ValueError("one_hot: depth must be >= 0, got " + std::to_string(depth));
  check_value_fits(on_value, dtype, "one_hot");
  check_value_fits(off_value, dtype, "one_hot");
  std::vector<int64_t> dims = indices.shape().dims();
  dims.push_back(depth);
  check_dims(dims, "one_hot");
  Tensor out = Tensor::empty(Shape(std::move(dims)), dtype, indices.device());
  backend_for(indices).one_hot(indices, depth, on_value, off_value, out);
  return out;
}

Tensor cast(const Tensor& x, DType dtype) {
  check_defined(x, "cast");
  if (x.dtype() == dtype) return x;
  Tensor out = Tensor::empty(x.shape(), dtype, x.device());
  backend_for(x).cast(x, out);
  if (is_floating(x.dtype()) && is_floating(dtype)) {
    autograd::record(out, "cast", {x}, [from = x.dtype()](const Tensor& g, const NeedsGrad&) {
      return std::vector<Tensor>{cast(g, from)};
    });
  }
  return out;
}

Tensor broadcast_to(const Tensor& x, const Shape& shape) {
  check_defined(x, "broadcast_to");
  check_dims(shape.dims(), "broadcast_to");
  if (x.shape() == shape) return x;
  if (x.rank() > shape.rank() || broadcast_shapes(x.shape(), shape, "broadcast_to") != shape) {
    throw ShapeError("broadcast_to: cannot broadcast shape " + x.shape().to_string() + " to " +
                     shape.to_string());
  }
  Tensor out = Tensor::empty(shape, x.dtype(), x.device());
  // where(true, x, x) is the broadcasting copy every backend already has, for every dtype.
  const Tensor always = full(Shape{}, 1.0, DType::kBool, x.device());
  backend_for(x).where(always, x, x, out);
  autograd::record(out, "broadcast_to", {x}, [xs = x.shape()](const Tensor& g, const NeedsGrad&) {
    return std::vector<Tensor>{sum_to_shape(g, xs)};
  });
  return out;
}

Tensor stop_gradient(const Tensor& x) {
  check_defined(x, "stop_gradient");
  return x.alias();
}

Tensor to_device(const Tensor& x, Device device) {
  check_defined(x, "to_device");
  if (x.device() == device) return x;
  Tensor out = Tensor::empty(x.shape(), x.dtype(), device);
  // The non-CPU side's backend knows how to reach the other.
  Backend& backend = x.device().type != DeviceType::kCPU ? backend_for(x.device()) : backend_for(device);
  backend.copy_bytes(x.raw_data(), x.device(), out.raw_data(), device, x.nbytes());
  autograd::record(out, "to_device", {x}, [from = x.device()](const Tensor& g, const NeedsGrad&) {
    return std::vector<Tensor>{to_device(g, from)};
  });
  return out;
}

}  // namespace strata
