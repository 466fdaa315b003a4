// Elementwise math, comparisons and reductions: validation, output allocation, kernel dispatch
// and gradients. Backward functions use ops only, so they run on whatever device the tensors
// live on; they capture aliases (no grad node) so a node never keeps its own graph alive.
#include "framework/ops/math_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "framework/autograd/grad_mode.h"
#include "framework/autograd/node.h"
#include "framework/backend/backend.h"
#include "framework/ops/creation.h"
#include "framework/ops/shape_ops.h"

namespace strata {
namespace {

using autograd::NeedsGrad;

void check_defined(const Tensor& t, const char* op) {
  if (!t.defined()) throw ValueError(std::string(op) + ": got an undefined tensor");
}

void check_same_device(const Tensor& a, const Tensor& b, const char* op) {
  if (a.device() != b.device()) {
    throw DeviceError(std::string(op) + ": tensors are on different devices: " +
                      a.device().to_string() + " and " + b.device().to_string() +
                      "; move one with .to(device)");
  }
}

void check_same_dtype(const Tensor& a, const Tensor& b, const char* op) {
  if (a.dtype() != b.dtype()) {
    throw DTypeError(std::string(op) + ": dtypes differ: " + dtype_name(a.dtype()) + " vs " +
                     dtype_name(b.dtype()) + "; cast one operand");
  }
}

void require_floating(const Tensor& x, const char* op) {
  if (!is_floating(x.dtype())) {
    throw DTypeError(std::string(op) + ": expected a floating dtype (float16, bfloat16, float32, "
                     "float64), got " + dtype_name(x.dtype()));
  }
}

void require_numeric(const Tensor& x, const char* op) {
  if (x.dtype() == DType::kBool) {
    throw DTypeError(std::string(op) + ": not defined for bool tensors; cast to a numeric dtype");
  }
}

void require_bool(const Tensor& x, const char* op) {
  if (x.dtype() != DType::kBool) {
    throw DTypeError(std::string(op) + ": expected a bool tensor, got " + dtype_name(x.dtype()));
  }
}

// A rank-0 tensor holding `value` in `dtype` on `device`; integers must be representable.
Tensor scalar_like(double value, DType dtype, Device device, const char* op) {
  if (is_integral(dtype)) {
    double lo = 0, hi = 0;
    switch (dtype) {
      case DType::kInt32: lo = -2147483648.0; hi = 2147483647.0; break;
      case DType::kUInt8: lo = 0; hi = 255; break;
      default: lo = -9223372036854775808.0; hi = 9223372036854774784.0; break;
    }
    if (!(value >= lo && value <= hi) || value != std::floor(value)) {
      throw ValueError(std::string(op) + ": scalar " + std::to_string(value) +
                       " is not representable in the tensor's dtype " + dtype_name(dtype) +
                       "; cast the tensor to a floating dtype first");
    }
  }
  return full(Shape{}, value, dtype, device);
}

// Same memory and shape, without the grad node: what backward functions capture.
Tensor saved(const Tensor& t) { return t.alias(); }

// A view of `x` with another shape of the same size (used for keepdims results).
Tensor view_as(const Tensor& x, const Shape& shape) {
  auto impl = std::make_shared<TensorImpl>(*x.impl());
  impl->shape = shape;
  impl->grad_node = nullptr;
  return Tensor(std::move(impl));
}

bool is_comparison(BinaryOp op) {
  return op >= BinaryOp::kEqual;
}

Tensor binary_forward(BinaryOp op, const Tensor& a, const Tensor& b, const char* name) {
  check_defined(a, name);
  check_defined(b, name);
  check_same_device(a, b, name);
  check_same_dtype(a, b, name);
  if (op == BinaryOp::kLogicalAnd || op == BinaryOp::kLogicalOr) {
    require_bool(a, name);
  } else if (!is_comparison(op) && op != BinaryOp::kMaximum && op != BinaryOp::kMinimum) {
    require_numeric(a, name);
  }
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), name);
  Tensor out = Tensor::empty(shape, is_comparison(op) ? DType::kBool : a.dtype(), a.device());
  backend_for(a).binary(op, a, b, out);
  return out;
}

Tensor unary_forward(UnaryOp op, const Tensor& x, const char* name) {
  check_defined(x, name);
  const bool to_bool = op == UnaryOp::kLogicalNot || op == UnaryOp::kIsNan || op == UnaryOp::kIsFinite;
  Tensor out = Tensor::empty(x.shape(), to_bool ? DType::kBool : x.dtype(), x.device());
  backend_for(x).unary(op, x, out);
  return out;
}

// Floating unary math with gradient grad_fn(g, x, y).
template <typename GradFn>
Tensor unary_math(UnaryOp op, const Tensor& x, const char* name, GradFn grad_fn) {
  check_defined(x, name);
  require_floating(x, name);
  Tensor y = unary_forward(op, x, name);
  if (autograd::any_requires_grad({x})) {
    autograd::record(y, name, {x},
                     [xs = saved(x), ys = saved(y), grad_fn](const Tensor& g, const NeedsGrad&) {
                       return std::vector<Tensor>{grad_fn(g, xs, ys)};
                     });
  }
  return y;
}

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

Reduced reduce_forward(ReduceOp op, const Tensor& x, std::vector<int> axes, bool keepdims,
                       const char* name) {
  check_defined(x, name);
  Reduced r;
  r.axes = normalize_axes(std::move(axes), x.rank(), name);
  r.keep = Tensor::empty(keepdims_shape(x.shape(), r.axes), x.dtype(), x.device());
  backend_for(x).reduce(op, x, r.axes, r.keep);
  r.out = keepdims ? r.keep : view_as(r.keep, dropped_shape(x.shape(), r.axes));
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

// Gradient of max/min: split equally among the elements equal to the extreme value.
Tensor extreme_grad(const Tensor& g, const Tensor& x, const Tensor& keep, const std::vector<int>& axes) {
  const Tensor mask = cast(equal(x, keep), x.dtype());
  const Tensor ties = reduce_sum(mask, axes, /*keepdims=*/true);
  return mask * (reshape(g, keep.shape()) / ties);
}

}  // namespace

// ---- binary arithmetic --------------------------------------------------------------------

Tensor add(const Tensor& a, const Tensor& b) {
  Tensor out = binary_forward(BinaryOp::kAdd, a, b, "add");
  autograd::record(out, "add", {a, b},
                   [sa = a.shape(), sb = b.shape()](const Tensor& g, const NeedsGrad& needs) {
                     return std::vector<Tensor>{needs[0] ? sum_to_shape(g, sa) : Tensor(),
                                                needs[1] ? sum_to_shape(g, sb) : Tensor()};
                   });
  return out;
}

Tensor subtract(const Tensor& a, const Tensor& b) {
  Tensor out = binary_forward(BinaryOp::kSub, a, b, "subtract");
  autograd::record(out, "subtract", {a, b},
                   [sa = a.shape(), sb = b.shape()](const Tensor& g, const NeedsGrad& needs) {
                     return std::vector<Tensor>{needs[0] ? sum_to_shape(g, sa) : Tensor(),
                                                needs[1] ? sum_to_shape(negative(g), sb) : Tensor()};
                   });
  return out;
}

Tensor multiply(const Tensor& a, const Tensor& b) {
  Tensor out = binary_forward(BinaryOp::kMul, a, b, "multiply");
  if (autograd::any_requires_grad({a, b})) {
    autograd::record(out, "multiply", {a, b},
                     [sa = saved(a), sb = saved(b)](const Tensor& g, const NeedsGrad& needs) {
                       return std::vector<Tensor>{
                           needs[0] ? sum_to_shape(g * sb, sa.shape()) : Tensor(),
                           needs[1] ? sum_to_shape(g * sa, sb.shape()) : Tensor()};
                     });
  }
  return out;
}

Tensor divide(const Tensor& a, const Tensor& b) {
  Tensor out = binary_forward(BinaryOp::kDiv, a, b, "divide");
  if (autograd::any_requires_grad({a, b})) {
    autograd::record(out, "divide", {a, b},
                     [sa = saved(a), sb = saved(b)](const Tensor& g, const NeedsGrad& needs) {
                       Tensor ga, gb;
                       if (needs[0]) ga = sum_to_shape(g / sb, sa.shape());
                       // d(a/b)/db = -a / b^2
                       if (needs[1]) gb = sum_to_shape(negative(g * sa / square(sb)), sb.shape());
                       return std::vector<Tensor>{ga, gb};
                     });
  }
  return out;
}

Tensor pow(const Tensor& a, const Tensor& b) {
  Tensor out = binary_forward(BinaryOp::kPow, a, b, "pow");
  if (autograd::any_requires_grad({a, b})) {
    autograd::record(
        out, "pow", {a, b},
        [sa = saved(a), sb = saved(b), so = saved(out)](const Tensor& g, const NeedsGrad& needs) {
          Tensor ga, gb;
          if (needs[0]) ga = sum_to_shape(g * sb * pow(sa, sb - 1.0), sa.shape());
          if (needs[1]) {
            // d(a^b)/db = a^b log(a), taken as 0 where a <= 0 (TensorFlow's convention).
            const Tensor positive = greater(sa, zeros_like(sa));
            const Tensor log_a = where(positive, log(where(positive, sa, ones_like(sa))), zeros_like(sa));
            gb = sum_to_shape(g * so * log_a, sb.shape());
          }
          return std::vector<Tensor>{ga, gb};
        });
  }
  return out;
}

Tensor maximum(const Tensor& a, const Tensor& b) {
  Tensor out = binary_forward(BinaryOp::kMaximum, a, b, "maximum");
  if (autograd::any_requires_grad({a, b})) {
    autograd::record(out, "maximum", {a, b},
                     [sa = saved(a), sb = saved(b)](const Tensor& g, const NeedsGrad& needs) {
                       // Ties send the gradient to a, as TensorFlow.
                       const Tensor to_a = cast(greater_equal(sa, sb), g.dtype());
                       Tensor ga, gb;
                       if (needs[0]) ga = sum_to_shape(g * to_a, sa.shape());
                       if (needs[1]) gb = sum_to_shape(g * (1.0 - to_a), sb.shape());
                       return std::vector<Tensor>{ga, gb};
                     });
  }
  return out;
}

Tensor minimum(const Tensor& a, const Tensor& b) {
  Tensor out = binary_forward(BinaryOp::kMinimum, a, b, "minimum");
  if (autograd::any_requires_grad({a, b})) {
    autograd::record(out, "minimum", {a, b},
                     [sa = saved(a), sb = saved(b)](const Tensor& g, const NeedsGrad& needs) {
                       const Tensor to_a = cast(less_equal(sa, sb), g.dtype());
                       Tensor ga, gb;
                       if (needs[0]) ga = sum_to_shape(g * to_a, sa.shape());
                       if (needs[1]) gb = sum_to_shape(g * (1.0 - to_a), sb.shape());
                       return std::vector<Tensor>{ga, gb};
                     });
  }
  return out;
}

Tensor add(const Tensor& a, double b) {
  check_defined(a, "add");
  return add(a, scalar_like(b, a.dtype(), a.device(), "add"));
}
Tensor multiply(const Tensor& a, double b) {
  check_defined(a, "multiply");
  return multiply(a, scalar_like(b, a.dtype(), a.device(), "multiply"));
}
Tensor pow(const Tensor& a, double b) {
  check_defined(a, "pow");
  return pow(a, scalar_like(b, a.dtype(), a.device(), "pow"));
}

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return subtract(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return multiply(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return divide(a, b); }
Tensor operator-(const Tensor& a) { return negative(a); }
Tensor operator+(const Tensor& a, double b) { return add(a, b); }
Tensor operator-(const Tensor& a, double b) {
  check_defined(a, "subtract");
  return subtract(a, scalar_like(b, a.dtype(), a.device(), "subtract"));
}
Tensor operator*(const Tensor& a, double b) { return multiply(a, b); }
Tensor operator/(const Tensor& a, double b) {
  check_defined(a, "divide");
  return divide(a, scalar_like(b, a.dtype(), a.device(), "divide"));
}
Tensor operator+(double a, const Tensor& b) { return add(b, a); }
Tensor operator-(double a, const Tensor& b) {
  check_defined(b, "subtract");
  return subtract(scalar_like(a, b.dtype(), b.device(), "subtract"), b);
}
Tensor operator*(double a, const Tensor& b) { return multiply(b, a); }
Tensor operator/(double a, const Tensor& b) {
  check_defined(b, "divide");
  return divide(scalar_like(a, b.dtype(), b.device(), "divide"), b);
}

// ---- unary math ---------------------------------------------------------------------------

Tensor negative(const Tensor& x) {
  check_defined(x, "negative");
  require_numeric(x, "negative");
  Tensor y = unary_forward(UnaryOp::kNeg, x, "negative");
  autograd::record(y, "negative", {x}, [](const Tensor& g, const NeedsGrad&) {
    return std::vector<Tensor>{negative(g)};
  });
  return y;
}

Tensor abs(const Tensor& x) {
  check_defined(x, "abs");
  require_numeric(x, "abs");
  Tensor y = unary_forward(UnaryOp::kAbs, x, "abs");
  if (autograd::any_requires_grad({x})) {
    autograd::record(y, "abs", {x}, [xs = saved(x)](const Tensor& g, const NeedsGrad&) {
      return std::vector<Tensor>{g * sign(xs)};
    });
  }
  return y;
}

Tensor sign(const Tensor& x) {
  check_defined(x, "sign");
  require_numeric(x, "sign");
  Tensor y = unary_forward(UnaryOp::kSign, x, "sign");
  // Piecewise constant: a zero gradient, as TensorFlow.
  autograd::record(y, "sign", {x}, [](const Tensor& g, const NeedsGrad&) {
    return std::vector<Tensor>{zeros_like(g)};
  });
  return y;
}

Tensor exp(const Tensor& x) {
  return unary_math(UnaryOp::kExp, x, "exp",
                    [](const Tensor& g, const Tensor&, const Tensor& y) { return g * y; });
}
Tensor log(const Tensor& x) {
  return unary_math(UnaryOp::kLog, x, "log",
                    [](const Tensor& g, const Tensor& xs, const Tensor&) { return g / xs; });
}
Tensor log1p(const Tensor& x) {
  return unary_math(UnaryOp::kLog1p, x, "log1p",
                    [](const Tensor& g, const Tensor& xs, const Tensor&) { return g / (xs + 1.0); });
}
Tensor sqrt(const Tensor& x) {
  return unary_math(UnaryOp::kSqrt, x, "sqrt", [](const Tensor& g, const Tensor&, const Tensor& y) {
    return g * 0.5 / y;
  });
}
Tensor rsqrt(const Tensor& x) {
  // d(x^-1/2)/dx = -0.5 x^-3/2 = -0.5 y^3
  return unary_math(UnaryOp::kRsqrt, x, "rsqrt", [](const Tensor& g, const Tensor&, const Tensor& y) {
    return g * (-0.5) * y * y * y;
  });
}
Tensor square(const Tensor& x) {
  check_defined(x, "square");
  require_numeric(x, "square");
  Tensor y = unary_forward(UnaryOp::kSquare, x, "square");
  if (autograd::any_requires_grad({x})) {
    autograd::record(y, "square", {x}, [xs = saved(x)](const Tensor& g, const NeedsGrad&) {
      return std::vector<Tensor>{g * xs * 2.0};
    });
  }
  return y;
}
Tensor reciprocal(const Tensor& x) {
  return unary_math(UnaryOp::kReciprocal, x, "reciprocal",
                    [](const Tensor& g, const Tensor&, const Tensor& y) { return negative(g * y * y); });
}
Tensor sin(const Tensor& x) {
  return unary_math(UnaryOp::kSin, x, "sin",
                    [](const Tensor& g, const Tensor& xs, const Tensor&) { return g * cos(xs); });
}
Tensor cos(const Tensor& x) {
  return unary_math(UnaryOp::kCos, x, "cos", [](const Tensor& g, const Tensor& xs, const Tensor&) {
    return negative(g * sin(xs));
  });
}

// Rounding has no gradient (TensorFlow returns None): not recorded.
Tensor floor(const Tensor& x) {
  check_defined(x, "floor");
  require_floating(x, "floor");
  return unary_forward(UnaryOp::kFloor, x, "floor");
}
Tensor ceil(const Tensor& x) {
  check_defined(x, "ceil");
  require_floating(x, "ceil");
  return unary_forward(UnaryOp::kCeil, x, "ceil");
}
Tensor round(const Tensor& x) {
  check_defined(x, "round");
  require_floating(x, "round");
  return unary_forward(UnaryOp::kRound, x, "round");
}

Tensor clip_by_value(const Tensor& x, double lo, double hi) {
  check_defined(x, "clip_by_value");
  require_numeric(x, "clip_by_value");
  if (std::isnan(lo) || std::isnan(hi) || lo > hi) {
    throw ValueError("clip_by_value: expected clip_value_min <= clip_value_max, got " +
                     std::to_string(lo) + " and " + std::to_string(hi));
  }
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  backend_for(x).clip(x, lo, hi, y);
  if (autograd::any_requires_grad({x})) {
    autograd::record(y, "clip_by_value", {x}, [xs = saved(x), lo, hi](const Tensor& g, const NeedsGrad&) {
      // The gradient passes where x is inside [lo, hi].
      Tensor lo_t = scalar_like(lo, xs.dtype(), xs.device(), "clip_by_value");
      Tensor hi_t = scalar_like(hi, xs.dtype(), xs.device(), "clip_by_value");
      const Tensor inside = logical_and(greater_equal(xs, lo_t), less_equal(xs, hi_t));
      return std::vector<Tensor>{g * cast(inside, g.dtype())};
    });
  }
  return y;
}

// ---- comparisons and logic ----------------------------------------------------------------

Tensor equal(const Tensor& a, const Tensor& b) { return binary_forward(BinaryOp::kEqual, a, b, "equal"); }
Tensor not_equal(const Tensor& a, const Tensor& b) {
  return binary_forward(BinaryOp::kNotEqual, a, b, "not_equal");
}
Tensor less(const Tensor& a, const Tensor& b) { return binary_forward(BinaryOp::kLess, a, b, "less"); }
Tensor less_equal(const Tensor& a, const Tensor& b) {
  return binary_forward(BinaryOp::kLessEqual, a, b, "less_equal");
}
Tensor greater(const Tensor& a, const Tensor& b) {
  return binary_forward(BinaryOp::kGreater, a, b, "greater");
}
Tensor greater_equal(const Tensor& a, const Tensor& b) {
  return binary_forward(BinaryOp::kGreaterEqual, a, b, "greater_equal");
}
Tensor logical_and(const Tensor& a, const Tensor& b) {
  return binary_forward(BinaryOp::kLogicalAnd, a, b, "logical_and");
}
Tensor logical_or(const Tensor& a, const Tensor& b) {
  return binary_forward(BinaryOp::kLogicalOr, a, b, "logical_or");
}
Tensor logical_not(const Tensor& x) {
  check_defined(x, "logical_not");
  require_bool(x, "logical_not");
  return unary_forward(UnaryOp::kLogicalNot, x, "logical_not");
}
Tensor is_nan(const Tensor& x) {
  check_defined(x, "is_nan");
  require_floating(x, "is_nan");
  return unary_forward(UnaryOp::kIsNan, x, "is_nan");
}
Tensor is_finite(const Tensor& x) {
  check_defined(x, "is_finite");
  require_floating(x, "is_finite");
  return unary_forward(UnaryOp::kIsFinite, x, "is_finite");
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  check_defined(cond, "where");
  check_defined(a, "where");
  check_defined(b, "where");
  require_bool(cond, "where");
  check_same_device(cond, a, "where");
  check_same_device(a, b, "where");
  check_same_dtype(a, b, "where");
  const Shape shape = broadcast_shapes(broadcast_shapes(cond.shape(), a.shape(), "where"),
                                       b.shape(), "where");
  Tensor out = Tensor::empty(shape, a.dtype(), a.device());
  backend_for(a).where(cond, a, b, out);
  if (autograd::any_requires_grad({a, b})) {
    autograd::record(out, "where", {cond, a, b},
                     [c = saved(cond), sa = a.shape(), sb = b.shape()](const Tensor& g,
                                                                       const NeedsGrad& needs) {
                       const Tensor zero = zeros(Shape{}, g.dtype(), g.device());
                       Tensor ga, gb;
                       if (needs[1]) ga = sum_to_shape(where(c, g, zero), sa);
                       if (needs[2]) gb = sum_to_shape(where(c, zero, g), sb);
                       return std::vector<Tensor>{Tensor(), ga, gb};
                     });
  }
  return out;
}

// ---- reductions ---------------------------------------------------------------------------

Tensor reduce_sum(const Tensor& x, std::vector<int> axes, bool keepdims) {
  check_defined(x, "reduce_sum");
  require_numeric(x, "reduce_sum");
  Reduced r = reduce_forward(ReduceOp::kSum, x, std::move(axes), keepdims, "reduce_sum");
  autograd::record(r.out, "reduce_sum", {x},
                   [keep = r.keep.shape(), xs = x.shape()](const Tensor& g, const NeedsGrad&) {
                     return std::vector<Tensor>{broadcast_grad(g, keep, xs)};
                   });
  return r.out;
}

Tensor reduce_mean(const Tensor& x, std::vector<int> axes, bool keepdims) {
  check_defined(x, "reduce_mean");
  require_numeric(x, "reduce_mean");
  Reduced r = reduce_forward(ReduceOp::kMean, x, std::move(axes), keepdims, "reduce_mean");
  const int64_t count = r.keep.numel() == 0 ? 0 : x.numel() / r.keep.numel();
  autograd::record(r.out, "reduce_mean", {x},
                   [keep = r.keep.shape(), xs = x.shape(), count](const Tensor& g, const NeedsGrad&) {
                     return std::vector<Tensor>{broadcast_grad(g, keep, xs) / double(count)};
                   });
  return r.out;
}

Tensor reduce_max(const Tensor& x, std::vector<int> axes, bool keepdims) {
  check_defined(x, "reduce_max");
  Reduced r = reduce_forward(ReduceOp::kMax, x, std::move(axes), keepdims, "reduce_max");
  if (autograd::any_requires_grad({x})) {
    autograd::record(r.out, "reduce_max", {x},
                     [xs = saved(x), keep = saved(r.keep), ax = r.axes](const Tensor& g, const NeedsGrad&) {
                       return std::vector<Tensor>{extreme_grad(g, xs, keep, ax)};
                     });
  }
  return r.out;
}

Tensor reduce_min(const Tensor& x, std::vector<int> axes, bool keepdims) {
  check_defined(x, "reduce_min");
  Reduced r = reduce_forward(ReduceOp::kMin, x, std::move(axes), keepdims, "reduce_min");
  if (autograd::any_requires_grad({x})) {
    autograd::record(r.out, "reduce_min", {x},
                     [xs = saved(x), keep = saved(r.keep), ax = r.axes](const Tensor& g, const NeedsGrad&) {
                       return std::vector<Tensor>{extreme_grad(g, xs, keep, ax)};
                     });
  }
  return r.out;
}

Tensor reduce_prod(const Tensor& x, std::vector<int> axes, bool keepdims) {
  check_defined(x, "reduce_prod");
  require_numeric(x, "reduce_prod");
  Reduced r = reduce_forward(ReduceOp::kProd, x, std::move(axes), keepdims, "reduce_prod");
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
  check_defined(x, "reduce_any");
  require_bool(x, "reduce_any");
  return reduce_forward(ReduceOp::kAny, x, std::move(axes), keepdims, "reduce_any").out;
}

Tensor reduce_all(const Tensor& x, std::vector<int> axes, bool keepdims) {
  check_defined(x, "reduce_all");
  require_bool(x, "reduce_all");
  return reduce_forward(ReduceOp::kAll, x, std::move(axes), keepdims, "reduce_all").out;
}

Tensor argmax(const Tensor& x, int axis) { return arg_reduce(ArgReduceOp::kArgMax, x, axis, "argmax"); }
Tensor argmin(const Tensor& x, int axis) { return arg_reduce(ArgReduceOp::kArgMin, x, axis, "argmin"); }

Tensor norm(const Tensor& x) {
  check_defined(x, "norm");
  require_floating(x, "norm");
  Tensor n;
  {
    NoGradGuard no_grad;
    n = sqrt(reduce_sum(square(x)));
  }
  if (autograd::any_requires_grad({x})) {
    // x / |x|, with 0 at x = 0 instead of sqrt's 0/0.
    autograd::record(n, "norm", {x}, [xs = saved(x), ns = saved(n)](const Tensor& g, const NeedsGrad&) {
      const Tensor safe = where(greater(ns, zeros_like(ns)), ns, ones_like(ns));
      return std::vector<Tensor>{xs * (g / safe)};
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
                       const Tensor safe = where(greater(ns, zeros_like(ns)), ns, ones_like(ns));
                       const Tensor scale = g / safe;
                       std::vector<Tensor> grads(kept.size());
                       for (size_t i = 0; i < kept.size(); ++i) {
                         if (needs[i]) grads[i] = kept[i] * scale;
                       }
                       return grads;
                     });
  }
  return n;
}

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
