// Elementwise math, scalar operands and operators, comparisons, where and clip_by_value:
// validation, output allocation, kernel dispatch and gradients. Backward functions use ops only,
// so they run on whatever device the tensors live on; they capture aliases (no grad node) so a
// node never keeps its own graph alive.
#include "framework/ops/math_ops.h"

#include <cmath>
#include <string>

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

// A dtype requirement on an op's input, such as require_floating.
using DTypeCheck = void (*)(const Tensor&, const char*);

// A rank-0 tensor holding `value` in `dtype` on `device`; integers must be representable.
Tensor scalar_like(double value, DType dtype, Device device, const char* op) {
  if (is_integral(dtype)) {
    const auto [lo, hi] = integral_range(dtype);
    if (!(value >= lo && value <= hi) || value != std::floor(value)) {
      throw ValueError(std::string(op) + ": scalar " + std::to_string(value) +
                       " is not representable in the tensor's dtype " + dtype_name(dtype) +
                       "; cast the tensor to a floating dtype first");
    }
  }
  return full(Shape{}, value, dtype, device);
}

// The scalar operand of `op` applied to tensor t: a rank-0 tensor in t's dtype and on its device.
Tensor scalar_operand(const Tensor& t, double value, const char* op) {
  check_defined(t, op);
  return scalar_like(value, t.dtype(), t.device(), op);
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

// Checks x (defined, and of a dtype `require` accepts) and runs the unary kernel.
Tensor unary_forward(UnaryOp op, const Tensor& x, const char* name, DTypeCheck require) {
  check_defined(x, name);
  require(x, name);
  const bool to_bool = op == UnaryOp::kLogicalNot || op == UnaryOp::kIsNan || op == UnaryOp::kIsFinite;
  Tensor out = Tensor::empty(x.shape(), to_bool ? DType::kBool : x.dtype(), x.device());
  backend_for(x).unary(op, x, out);
  return out;
}

// Floating unary math with gradient grad_fn(g, x, y).
template <typename GradFn>
Tensor unary_math(UnaryOp op, const Tensor& x, const char* name, GradFn grad_fn) {
  Tensor y = unary_forward(op, x, name, require_floating);
  if (autograd::any_requires_grad({x})) {
    autograd::record(y, name, {x},
                     [xs = saved(x), ys = saved(y), grad_fn](const Tensor& g, const NeedsGrad&) {
                       return std::vector<Tensor>{grad_fn(g, xs, ys)};
                     });
  }
  return y;
}

// maximum / minimum: the gradient goes to the operand that was picked, a where picks_a(a, b)
// holds (ties go to a, as TensorFlow), b elsewhere.
Tensor binary_extreme(BinaryOp op, const Tensor& a, const Tensor& b, const char* name,
                      Tensor (*picks_a)(const Tensor&, const Tensor&)) {
  Tensor out = binary_forward(op, a, b, name);
  if (autograd::any_requires_grad({a, b})) {
    autograd::record(out, name, {a, b},
                     [sa = saved(a), sb = saved(b), picks_a](const Tensor& g, const NeedsGrad& needs) {
                       const Tensor to_a = cast(picks_a(sa, sb), g.dtype());
                       Tensor ga, gb;
                       if (needs[0]) ga = sum_to_shape(g * to_a, sa.shape());
                       if (needs[1]) gb = sum_to_shape(g * (1.0 - to_a), sb.shape());
                       return std::vector<Tensor>{ga, gb};
                     });
  }
  return out;
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
  return binary_extreme(BinaryOp::kMaximum, a, b, "maximum", greater_equal);
}

Tensor minimum(const Tensor& a, const Tensor& b) {
  return binary_extreme(BinaryOp::kMinimum, a, b, "minimum", less_equal);
}

// ---- scalar operands and operators --------------------------------------------------------

Tensor add(const Tensor& a, double b) { return add(a, scalar_operand(a, b, "add")); }
Tensor multiply(const Tensor& a, double b) { return multiply(a, scalar_operand(a, b, "multiply")); }
Tensor pow(const Tensor& a, double b) { return pow(a, scalar_operand(a, b, "pow")); }

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return subtract(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return multiply(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return divide(a, b); }
Tensor operator-(const Tensor& a) { return negative(a); }
Tensor operator+(const Tensor& a, double b) { return add(a, b); }
Tensor operator-(const Tensor& a, double b) {
  return subtract(a, scalar_operand(a, b, "subtract"));
}
Tensor operator*(const Tensor& a, double b) { return multiply(a, b); }
Tensor operator/(const Tensor& a, double b) { return divide(a, scalar_operand(a, b, "divide")); }
Tensor operator+(double a, const Tensor& b) { return add(b, a); }
Tensor operator-(double a, const Tensor& b) {
  return subtract(scalar_operand(b, a, "subtract"), b);
}
Tensor operator*(double a, const Tensor& b) { return multiply(b, a); }
Tensor operator/(double a, const Tensor& b) { return divide(scalar_operand(b, a, "divide"), b); }

// ---- unary math ---------------------------------------------------------------------------

Tensor negative(const Tensor& x) {
  Tensor y = unary_forward(UnaryOp::kNeg, x, "negative", require_numeric);
  autograd::record(y, "negative", {x}, [](const Tensor& g, const NeedsGrad&) {
    return std::vector<Tensor>{negative(g)};
  });
  return y;
}

Tensor abs(const Tensor& x) {
  Tensor y = unary_forward(UnaryOp::kAbs, x, "abs", require_numeric);
  if (autograd::any_requires_grad({x})) {
    autograd::record(y, "abs", {x}, [xs = saved(x)](const Tensor& g, const NeedsGrad&) {
      return std::vector<Tensor>{g * sign(xs)};
    });
  }
  return y;
}

Tensor sign(const Tensor& x) {
  Tensor y = unary_forward(UnaryOp::kSign, x, "sign", require_numeric);
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
  Tensor y = unary_forward(UnaryOp::kSquare, x, "square", require_numeric);
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
Tensor floor(const Tensor& x) { return unary_forward(UnaryOp::kFloor, x, "floor", require_floating); }
Tensor ceil(const Tensor& x) { return unary_forward(UnaryOp::kCeil, x, "ceil", require_floating); }
Tensor round(const Tensor& x) { return unary_forward(UnaryOp::kRound, x, "round", require_floating); }

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
  return unary_forward(UnaryOp::kLogicalNot, x, "logical_not", require_bool);
}
Tensor is_nan(const Tensor& x) { return unary_forward(UnaryOp::kIsNan, x, "is_nan", require_floating); }
Tensor is_finite(const Tensor& x) {
  return unary_forward(UnaryOp::kIsFinite, x, "is_finite", require_floating);
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

}  // namespace strata
