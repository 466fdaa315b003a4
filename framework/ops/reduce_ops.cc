// Reductions (reduce_*, argmax / argmin, norm, global_norm) and sum_to_shape, the reduction that
// undoes broadcasting: validation, output allocation, kernel dispatch and gradients. Backward
// functions use ops only, so they run on whatever device the tensors live on; they capture
// aliases (no grad node) so a node never keeps its own graph alive.
#include "framework/ops/math_ops.h"

#include <algorithm>
#include <string>

#include "framework/autograd/grad_mode.h"
#include "framework/autograd/node.h"
#include "framework/backend/backend.h"
#include "framework/ops/creation.h"
#include "framework/ops/op_checks.h"
#include "framework/ops/op_util.h"
#include "framework/ops/shape_ops.h"

namespace strata {
namespace {

using namespace ops_detail;
using autograd::NeedsGrad;

// A dtype requirement on a reduction's input, such as require_numeric; null for none.
using DTypeCheck = void (*)(const Tensor&, const char*);

// Sorted, unique, non-negative axes; all axes when `axes` is empty.
std::vector<int> normalize_axes(std::vector<int> axes, int rank, const char* op) {
  if (rank == 0) {
    for (int a : axes) normalize_axis(a, rank, op);  // only 0 / -1 are valid
    return {};
  }
  if (axes.empty()) {
    for (int i = 0; i < rank; ++i) axes.push_back(i);
    return axes;
  }
  for (int& a : axes) a = normalize_axis(a, rank, op);
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) {
    throw ValueError(std::string(op) + ": duplicate axis in reduction axes for a tensor of rank " +
                     std::to_string(rank));
  }
  return axes;
}

Shape keepdims_shape(const Shape& s, const std::vector<int>& axes) {
  std::vector<int64_t> dims = s.dims();
  for (int a : axes) dims[size_t(a)] = 1;
  return Shape(std::move(dims));
}

Shape dropped_shape(const Shape& s, const std::vector<int>& axes) {
  std::vector<int64_t> dims;
  for (int i = 0; i < s.rank(); ++i) {
    if (!std::binary_search(axes.begin(), axes.end(), i)) dims.push_back(s[i]);
  }
  return Shape(std::move(dims));
}

struct Reduced {
  Tensor keep;  // keepdims result
  Tensor out;   // what the caller sees
  std::vector<int> axes;
};

// Checks x (defined, and of a dtype `require` accepts) and runs the reduction kernel.
Reduced reduce_forward(ReduceOp op, const Tensor& x, std::vector<int> axes, bool keepdims,
                       const char* name, DTypeCheck require) {
  check_defined(x, name);
  if (require) require(x, name);
  Reduced r;
  r.axes = normalize_axes(std::move(axes), x.rank(), name);
  r.keep = Tensor::empty(keepdims_shape(x.shape(), r.axes), x.dtype(), x.device());
  backend_for(x).reduce(op, x, r.axes, r.keep);
  r.out = keepdims ? r.keep : detached_view(r.keep, dropped_shape(x.shape(), r.axes));
  return r;
}

// The gradient of a reduction's output, reshaped to keepdims form and broadcast over x.
Tensor broadcast_grad(const Tensor& g, const Shape& keep_shape, const Shape& x_shape) {
  return broadcast_to(reshape(g, keep_shape), x_shape);
}

Tensor arg_reduce(ArgReduceOp op, const Tensor& x, int axis, const char* name) {
  check_defined(x, name);
  require_numeric(x, name);
  if (x.rank() == 0) {
    throw ShapeError(std::string(name) + ": expected a tensor of rank >= 1, got a scalar");
  }
  const int a = normalize_axis(axis, x.rank(), name);
  if (x.shape()[a] == 0) {
    throw ValueError(std::string(name) + ": axis " + std::to_string(axis) + " of shape " +
                     x.shape().to_string() + " is empty");
  }
  std::vector<int64_t> dims = x.shape().dims();
  dims.erase(dims.begin() + a);
  Tensor out = Tensor::empty(Shape(std::move(dims)), DType::kInt64, x.device());
  backend_for(x).arg_reduce(op, x, a, out);
  return out;
}

// reduce_max / reduce_min. The gradient is split equally among the elements equal to the
// extreme value.
Tensor reduce_extreme(ReduceOp op, const Tensor& x, std::vector<int> axes, bool keepdims,
                      const char* name) {
  Reduced r = reduce_forward(op, x, std::move(axes), keepdims, name, nullptr);
  if (autograd::any_requires_grad({x})) {
    autograd::record(r.out, name, {x},
                     [xs = saved(x), keep = saved(r.keep), ax = r.axes](const Tensor& g, const NeedsGrad&) {
                       const Tensor mask = cast(equal(xs, keep), xs.dtype());
                       const Tensor ties = reduce_sum(mask, ax, /*keepdims=*/true);
                       return std::vector<Tensor>{mask * (reshape(g, keep.shape()) / ties)};
                     });
  }
  return r.out;
}

// A norm as a divisor: 1 where it is 0, so that x / |x| is 0 at x = 0 instead of sqrt's 0/0.
Tensor safe_norm_divisor(const Tensor& n) {
  return where(greater(n, zeros_like(n)), n, ones_like(n));
}

}  // namespace

// ---- reductions ---------------------------------------------------------------------------

Tensor reduce_sum(const Tensor& x, std::vector<int> axes, bool keepdims) {
  Reduced r = reduce_forward(ReduceOp::kSum, x, std::move(axes), keepdims, "reduce_sum",
                             require_numeric);
  autograd::record(r.out, "reduce_sum", {x},
                   [keep = r.keep.shape(), xs = x.shape()](const Tensor& g, const NeedsGrad&) {
                     return std::vector<Tensor>{broadcast_grad(g, keep, xs)};
                   });
  return r.out;
}

Tensor reduce_mean(const Tensor& x, std::vector<int> axes, bool keepdims) {
  Reduced r = reduce_forward(ReduceOp::kMean, x, std::move(axes), keepdims, "reduce_mean",
                             require_numeric);
  const int64_t count = r.keep.numel() == 0 ? 0 : x.numel() / r.keep.numel();
  autograd::record(r.out, "reduce_mean", {x},
                   [keep = r.keep.shape(), xs = x.shape(), count](const Tensor& g, const NeedsGrad&) {
                     return std::vector<Tensor>{broadcast_grad(g, keep, xs) / double(count)};
                   });
  return r.out;
}

Tensor reduce_max(const Tensor& x, std::vector<int> axes, bool keepdims) {
  return reduce_extreme(ReduceOp::kMax, x, std::move(axes), keepdims, "reduce_max");
}

Tensor reduce_min(const Tensor& x, std::vector<int> axes, bool keepdims) {
  return reduce_extreme(ReduceOp::kMin, x, std::move(axes), keepdims, "reduce_min");
}

Tensor reduce_prod(const Tensor& x, std::vector<int> axes, bool keepdims) {
  Reduced r = reduce_forward(ReduceOp::kProd, x, std::move(axes), keepdims, "reduce_prod",
                             require_numeric);
  if (autograd::any_requires_grad({x})) {
    autograd::record(r.out, "reduce_prod", {x},
                     [xs = saved(x), keep = r.keep.shape(), ax = r.axes](const Tensor& g, const NeedsGrad&) {
                       // d(prod)/dx_i = product of the others, computed without dividing by
                       // zero: with no zero in the group it is prod/x_i; with exactly one zero,
                       // only that element gets the product of the rest; with more, all get 0.
                       const Tensor zero = zeros(Shape{}, xs.dtype(), xs.device());
                       const Tensor one = ones(Shape{}, xs.dtype(), xs.device());
                       const Tensor is_zero = equal(xs, zero);
                       const Tensor zeros_in_group = reduce_sum(cast(is_zero, xs.dtype()), ax, true);
                       const Tensor nonzero_x = where(is_zero, one, xs);
                       const Tensor prod_nonzero = reduce_prod(nonzero_x, ax, true);
                       const Tensor others = where(
                           is_zero, where(equal(zeros_in_group, one), prod_nonzero, zero),
                           where(equal(zeros_in_group, zero), prod_nonzero / nonzero_x, zero));
                       return std::vector<Tensor>{others * reshape(g, keep)};
                     });
  }
  return r.out;
}

Tensor reduce_any(const Tensor& x, std::vector<int> axes, bool keepdims) {
  return reduce_forward(ReduceOp::kAny, x, std::move(axes), keepdims, "reduce_any", require_bool)
      .out;
}

Tensor reduce_all(const Tensor& x, std::vector<int> axes, bool keepdims) {
  return reduce_forward(ReduceOp::kAll, x, std::move(axes), keepdims, "reduce_all", require_bool)
      .out;
}

Tensor argmax(const Tensor& x, int axis) { return arg_reduce(ArgReduceOp::kArgMax, x, axis, "argmax"); }
Tensor argmin(const Tensor& x, int axis) { return arg_reduce(ArgReduceOp::kArgMin, x, axis, "argmin"); }

// ---- norms --------------------------------------------------------------------------------

Tensor norm(const Tensor& x) {
  check_defined(x, "norm");
  require_floating(x, "norm");
  Tensor n;
  {
    NoGradGuard no_grad;
    n = sqrt(reduce_sum(square(x)));
  }
  if (autograd::any_requires_grad({x})) {
    autograd::record(n, "norm", {x}, [xs = saved(x), ns = saved(n)](const Tensor& g, const NeedsGrad&) {
      return std::vector<Tensor>{xs * (g / safe_norm_divisor(ns))};
    });
  }
  return n;
}

Tensor global_norm(const std::vector<Tensor>& xs) {
  std::vector<Tensor> defined;
  for (const Tensor& x : xs) {
    if (!x.defined()) continue;  // missing gradients are skipped, as TensorFlow
    require_floating(x, "global_norm");
    if (!defined.empty()) {
      check_same_device(defined[0], x, "global_norm");
      check_same_dtype(defined[0], x, "global_norm");
    }
    defined.push_back(x);
  }
  if (defined.empty()) return zeros(Shape{}, float32);
  Tensor n;
  {
    NoGradGuard no_grad;
    Tensor total = reduce_sum(square(defined[0]));
    for (size_t i = 1; i < defined.size(); ++i) total = total + reduce_sum(square(defined[i]));
    n = sqrt(total);
  }
  if (autograd::any_requires_grad(defined)) {
    std::vector<Tensor> kept;
    for (const Tensor& x : defined) kept.push_back(saved(x));
    autograd::record(n, "global_norm", defined,
                     [kept, ns = saved(n)](const Tensor& g, const NeedsGrad& needs) {
                       const Tensor scale = g / safe_norm_divisor(ns);
                       std::vector<Tensor> grads(kept.size());
                       for (size_t i = 0; i < kept.size(); ++i) {
                         if (needs[i]) grads[i] = kept[i] * scale;
                       }
                       return grads;
                     });
  }
  return n;
}

// ---- undoing broadcasting -----------------------------------------------------------------

Tensor sum_to_shape(const Tensor& x, const Shape& shape) {
  check_defined(x, "sum_to_shape");
  if (x.shape() == shape) return x;
  check_dims(shape.dims(), "sum_to_shape");
  if (shape.rank() > x.rank() || broadcast_shapes(shape, x.shape(), "sum_to_shape") != x.shape()) {
    throw ShapeError("sum_to_shape: cannot sum shape " + x.shape().to_string() + " down to " +
                     shape.to_string() + " (the target must broadcast to the source)");
  }
  require_numeric(x, "sum_to_shape");
  Tensor out = Tensor::empty(shape, x.dtype(), x.device());
  backend_for(x).sum_to(x, out);
  autograd::record(out, "sum_to_shape", {x}, [xs = x.shape()](const Tensor& g, const NeedsGrad&) {
    return std::vector<Tensor>{broadcast_to(g, xs)};
  });
  return out;
}

}  // namespace strata
