// Elementwise kernels on the CPU: casts, unary math, broadcasting binary ops, where, clip and
// sum_to. Inner loops run over contiguous memory so g++ -O3 vectorises them; 16-bit floats are
// loaded into float, computed, and rounded back on store. Integer arithmetic wraps (computed in
// the unsigned type) and integer division by zero gives 0, so no input is undefined behaviour.
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "framework/cpu/cpu_backend.h"
#include "framework/cpu/parallel.h"
#include "framework/kernels_math/elementwise_rules.h"

namespace strata {
namespace {

// The scalar rules (wrapping, floor division, saturation, NaN propagation) are the CUDA
// backend's too: framework/kernels_math/elementwise_rules.h.
using namespace kernels_math;

template <typename T>
constexpr bool kIsHalfLike = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// The type arithmetic on T happens in: float for the 16-bit floats, T otherwise.
template <typename T>
using Compute = std::conditional_t<kIsHalfLike<T>, float, T>;

// Converts between element types without undefined behaviour: floats going to integers
// saturate (NaN gives 0), anything going to bool tests != 0.
template <typename To, typename From>
To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else {
    using F = Compute<From>;
    const F c = F(v);
    if constexpr (std::is_same_v<To, bool>) {
      return c != F(0);
    } else if constexpr (kIsHalfLike<To>) {
      return To(float(c));
    } else if constexpr (std::is_floating_point_v<F> && std::is_integral_v<To>) {
      return saturate_to_integer<To>(c);
    } else {
      return static_cast<To>(c);  // integer narrowing is modular in C++20
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Broadcast loop plan: out's shape with size-1 dims dropped and adjacent dims merged wherever
// every input is laid out alike, so most cases become one contiguous inner loop (equal shapes,
// scalar operand) or rows of one (last-axis vector).

constexpr int kMaxInputs = 3;

struct LoopPlan {
  int inputs = 0;
  int64_t inner = 1;                                   // length of the innermost merged dim
  std::array<int64_t, kMaxInputs> inner_stride{};      // 0 (broadcast) or 1 per input
  std::vector<int64_t> row_dims;                       // outer merged dims, outermost first
  std::array<std::vector<int64_t>, kMaxInputs> row_strides;
  int64_t rows = 1;

  // Element offsets of each input at the start of `row`.
  void offsets(int64_t row, std::array<int64_t, kMaxInputs>& off) const {
    off.fill(0);
    for (int d = int(row_dims.size()) - 1; d >= 0; --d) {
      const int64_t i = row % row_dims[size_t(d)];
      row /= row_dims[size_t(d)];
      for (int k = 0; k < inputs; ++k) off[size_t(k)] += i * row_strides[size_t(k)][size_t(d)];
    }
  }
};

LoopPlan make_plan(const Shape& out, std::initializer_list<const Shape*> ins) {
  LoopPlan plan;
  plan.inputs = int(ins.size());
  const int r = out.rank();
  // Per-input strides aligned to out's dims (0 where the input is broadcast).
  std::vector<std::array<int64_t, kMaxInputs>> strides(static_cast<size_t>(r));
  int k = 0;
  for (const Shape* in : ins) {
    int64_t stride = 1;
    for (int i = r - 1; i >= 0; --i) {
      const int j = in->rank() - r + i;
      const int64_t d = j >= 0 ? (*in)[j] : 1;
      strides[size_t(i)][size_t(k)] = d == 1 ? 0 : stride;
      stride *= d;
    }
    ++k;
  }
  // Merge from the innermost dim outwards.
  std::vector<int64_t> dims;
  std::vector<std::array<int64_t, kMaxInputs>> merged;
  for (int i = r - 1; i >= 0; --i) {
    const int64_t d = out[i];
    if (d == 1) continue;
    if (!dims.empty()) {
      bool mergeable = true;
      for (int q = 0; q < plan.inputs; ++q) {
        if (strides[size_t(i)][size_t(q)] != merged.back()[size_t(q)] * dims.back()) mergeable = false;
      }
      if (mergeable) {
        dims.back() *= d;
        continue;
      }
    }
    dims.push_back(d);
    merged.push_back(strides[size_t(i)]);
  }
  if (dims.empty()) return plan;  // one element
  plan.inner = dims[0];
  for (int q = 0; q < plan.inputs; ++q) plan.inner_stride[size_t(q)] = merged[0][size_t(q)];
  for (size_t d = dims.size() - 1; d >= 1; --d) {
    plan.row_dims.push_back(dims[d]);
    for (int q = 0; q < plan.inputs; ++q) plan.row_strides[size_t(q)].push_back(merged[d][size_t(q)]);
    plan.rows *= dims[d];
  }
  return plan;
}

// Runs body(row_offsets, out_offset, inner_length) over every row of the plan, in parallel.
template <typename Body>
void for_each_row(const LoopPlan& plan, Body&& body) {
  const int64_t grain = std::max<int64_t>(1, cpu::kParallelGrain / std::max<int64_t>(plan.inner, 1));
  cpu::parallel_for(plan.rows, grain, [&](int64_t begin, int64_t end) {
    std::array<int64_t, kMaxInputs> off;
    for (int64_t row = begin; row < end; ++row) {
      plan.offsets(row, off);
      body(off, row * plan.inner, plan.inner);
    }
  });
}

// The inner loop of a binary op, specialised on which side is broadcast so each variant is a
// plain contiguous loop.
template <typename T, typename O, typename F>
void binary_inner(const T* a, int64_t sa, const T* b, int64_t sb, O* out, int64_t n, F f) {
  if (sa != 0 && sb != 0) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
  } else if (sa != 0) {
    const T bv = b[0];
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], bv);
  } else if (sb != 0) {
    const T av = a[0];
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) out[i] = f(av, b[i]);
  } else {
    const O v = f(a[0], b[0]);
    for (int64_t i = 0; i < n; ++i) out[i] = v;
  }
}

template <typename T, typename O, typename F>
void run_binary(const Tensor& a, const Tensor& b, Tensor& out, F op) {
  using C = Compute<T>;
  const T* pa = static_cast<const T*>(a.raw_data());
  const T* pb = static_cast<const T*>(b.raw_data());
  O* po = static_cast<O*>(out.raw_data());
  auto f = [op](T x, T y) -> O { return convert<O>(op(C(x), C(y))); };
  const LoopPlan plan = make_plan(out.shape(), {&a.shape(), &b.shape()});
  for_each_row(plan, [&](const std::array<int64_t, kMaxInputs>& off, int64_t o, int64_t n) {
    binary_inner(pa + off[0], plan.inner_stride[0], pb + off[1], plan.inner_stride[1], po + o, n,
                 f);
  });
}

template <typename T>
void binary_typed(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) {
  using C = Compute<T>;
  constexpr bool kInt = std::is_integral_v<C> && !std::is_same_v<C, bool>;
  constexpr bool kFloat = std::is_floating_point_v<C>;
  switch (op) {
    case BinaryOp::kEqual: return run_binary<T, bool>(a, b, out, [](C x, C y) { return x == y; });
    case BinaryOp::kNotEqual:
      return run_binary<T, bool>(a, b, out, [](C x, C y) { return x != y; });
    case BinaryOp::kLess: return run_binary<T, bool>(a, b, out, [](C x, C y) { return x < y; });
    case BinaryOp::kLessEqual:
      return run_binary<T, bool>(a, b, out, [](C x, C y) { return x <= y; });
    case BinaryOp::kGreater: return run_binary<T, bool>(a, b, out, [](C x, C y) { return x > y; });
    case BinaryOp::kGreaterEqual:
      return run_binary<T, bool>(a, b, out, [](C x, C y) { return x >= y; });
    case BinaryOp::kLogicalAnd:
      return run_binary<T, bool>(a, b, out, [](C x, C y) { return x != C(0) && y != C(0); });
    case BinaryOp::kLogicalOr:
      return run_binary<T, bool>(a, b, out, [](C x, C y) { return x != C(0) || y != C(0); });
    case BinaryOp::kMaximum:
      // NaN propagates, as numpy.maximum.
      return run_binary<T, T>(a, b, out, [](C x, C y) { return maximum_nan(x, y); });
    case BinaryOp::kMinimum:
      return run_binary<T, T>(a, b, out, [](C x, C y) { return minimum_nan(x, y); });
    default: break;
  }
  if constexpr (kFloat) {
    switch (op) {
      case BinaryOp::kAdd: return run_binary<T, T>(a, b, out, [](C x, C y) { return x + y; });
      case BinaryOp::kSub: return run_binary<T, T>(a, b, out, [](C x, C y) { return x - y; });
      case BinaryOp::kMul: return run_binary<T, T>(a, b, out, [](C x, C y) { return x * y; });
      case BinaryOp::kDiv: return run_binary<T, T>(a, b, out, [](C x, C y) { return x / y; });
      case BinaryOp::kPow:
        return run_binary<T, T>(a, b, out, [](C x, C y) { return C(std::pow(x, y)); });
      case BinaryOp::kFloorMod:
        return run_binary<T, T>(a, b, out, [](C x, C y) { return float_floormod(x, y); });
      case BinaryOp::kAddReLU:  // NaN propagates, as relu(NaN) does
        return run_binary<T, T>(a, b, out, [](C x, C y) { return add_relu(x, y); });
      default: break;
    }
  } else if constexpr (kInt) {
    switch (op) {
      case BinaryOp::kAdd: return run_binary<T, T>(a, b, out, [](C x, C y) { return wrap_add(x, y); });
      case BinaryOp::kSub: return run_binary<T, T>(a, b, out, [](C x, C y) { return wrap_sub(x, y); });
      case BinaryOp::kMul: return run_binary<T, T>(a, b, out, [](C x, C y) { return wrap_mul(x, y); });
      case BinaryOp::kDiv:
        return run_binary<T, T>(a, b, out, [](C x, C y) { return int_floordiv(x, y); });
      case BinaryOp::kPow: return run_binary<T, T>(a, b, out, [](C x, C y) { return int_pow(x, y); });
      case BinaryOp::kFloorMod:
        return run_binary<T, T>(a, b, out, [](C x, C y) { return int_floormod(x, y); });
      default: break;
    }
  }
  throw DTypeError(std::string("binary op: arithmetic is not supported for dtype ") +
                   dtype_name(a.dtype()));
}

template <typename T, typename O, typename F>
void map_unary(const Tensor& x, Tensor& out, F f) {
  using C = Compute<T>;
  const T* in = static_cast<const T*>(x.raw_data());
  O* o = static_cast<O*>(out.raw_data());
  cpu::parallel_for(x.numel(), cpu::kParallelGrain, [&](int64_t begin, int64_t end) {
#pragma omp simd
    for (int64_t i = begin; i < end; ++i) o[i] = convert<O>(f(C(in[i])));
  });
}

template <typename T>
void unary_typed(UnaryOp op, const Tensor& x, Tensor& out) {
  using C = Compute<T>;
  switch (op) {
    case UnaryOp::kLogicalNot:
      return map_unary<T, bool>(x, out, [](C v) { return v == C(0); });
    case UnaryOp::kIsNan: return map_unary<T, bool>(x, out, [](C v) { return v != v; });
    case UnaryOp::kIsFinite:
      if constexpr (std::is_floating_point_v<C>) {
        return map_unary<T, bool>(x, out, [](C v) { return std::isfinite(v); });
      } else {
        return map_unary<T, bool>(x, out, [](C) { return true; });
      }
    default: break;
  }
  if constexpr (std::is_floating_point_v<C>) {
    switch (op) {
      case UnaryOp::kNeg: return map_unary<T, T>(x, out, [](C v) { return -v; });
      case UnaryOp::kAbs: return map_unary<T, T>(x, out, [](C v) { return std::fabs(v); });
      case UnaryOp::kSign:
        return map_unary<T, T>(x, out, [](C v) { return sign_of(v); });
      case UnaryOp::kExp: return map_unary<T, T>(x, out, [](C v) { return std::exp(v); });
      case UnaryOp::kLog: return map_unary<T, T>(x, out, [](C v) { return std::log(v); });
      case UnaryOp::kLog1p: return map_unary<T, T>(x, out, [](C v) { return std::log1p(v); });
      case UnaryOp::kExpm1: return map_unary<T, T>(x, out, [](C v) { return std::expm1(v); });
      case UnaryOp::kSqrt: return map_unary<T, T>(x, out, [](C v) { return std::sqrt(v); });
      case UnaryOp::kRsqrt:
        return map_unary<T, T>(x, out, [](C v) { return C(1) / std::sqrt(v); });
      case UnaryOp::kSquare: return map_unary<T, T>(x, out, [](C v) { return v * v; });
      case UnaryOp::kReciprocal: return map_unary<T, T>(x, out, [](C v) { return C(1) / v; });
      case UnaryOp::kSin: return map_unary<T, T>(x, out, [](C v) { return std::sin(v); });
      case UnaryOp::kCos: return map_unary<T, T>(x, out, [](C v) { return std::cos(v); });
      case UnaryOp::kTanh: return map_unary<T, T>(x, out, [](C v) { return std::tanh(v); });
      case UnaryOp::kSigmoid:
        return map_unary<T, T>(x, out, [](C v) { return C(1) / (C(1) + std::exp(-v)); });
      case UnaryOp::kFloor: return map_unary<T, T>(x, out, [](C v) { return std::floor(v); });
      case UnaryOp::kCeil: return map_unary<T, T>(x, out, [](C v) { return std::ceil(v); });
      // Half to even, as TensorFlow's round (the default FP rounding mode).
      case UnaryOp::kRound: return map_unary<T, T>(x, out, [](C v) { return std::nearbyint(v); });
      default: break;
    }
  } else if constexpr (!std::is_same_v<C, bool>) {
    switch (op) {
      case UnaryOp::kNeg: return map_unary<T, T>(x, out, [](C v) { return wrap_neg(v); });
      case UnaryOp::kAbs:
        return map_unary<T, T>(x, out, [](C v) { return wrap_abs(v); });
      case UnaryOp::kSign: return map_unary<T, T>(x, out, [](C v) { return sign_of(v); });
      case UnaryOp::kSquare: return map_unary<T, T>(x, out, [](C v) { return wrap_mul(v, v); });
      case UnaryOp::kFloor:
      case UnaryOp::kCeil:
      case UnaryOp::kRound: return map_unary<T, T>(x, out, [](C v) { return v; });
      default: break;
    }
  }
  throw DTypeError(std::string("unary op: not supported for dtype ") + dtype_name(x.dtype()));
}

}  // namespace

void CpuBackend::cast(const Tensor& x, Tensor& out) {
  if (x.dtype() == out.dtype()) {
    if (x.nbytes() && x.raw_data() != out.raw_data()) std::memcpy(out.raw_data(), x.raw_data(), x.nbytes());
    return;
  }
  visit_dtype(x.dtype(), [&](auto from_tag) {
    using From = decltype(from_tag);
    visit_dtype(out.dtype(), [&](auto to_tag) {
      using To = decltype(to_tag);
      const From* in = static_cast<const From*>(x.raw_data());
      To* o = static_cast<To*>(out.raw_data());
      cpu::parallel_for(x.numel(), cpu::kParallelGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) o[i] = convert<To>(in[i]);
      });
    });
  });
}

void CpuBackend::unary(UnaryOp op, const Tensor& x, Tensor& out) {
  visit_dtype(x.dtype(), [&](auto tag) { unary_typed<decltype(tag)>(op, x, out); });
}

void CpuBackend::binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) {
  if (out.numel() == 0) return;
  visit_dtype(a.dtype(), [&](auto tag) { binary_typed<decltype(tag)>(op, a, b, out); });
}

void CpuBackend::where(const Tensor& cond, const Tensor& a, const Tensor& b, Tensor& out) {
  if (out.numel() == 0) return;
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const bool* pc = static_cast<const bool*>(cond.raw_data());
    const T* pa = static_cast<const T*>(a.raw_data());
    const T* pb = static_cast<const T*>(b.raw_data());
    T* po = static_cast<T*>(out.raw_data());
    const LoopPlan plan = make_plan(out.shape(), {&cond.shape(), &a.shape(), &b.shape()});
    const int64_t sc = plan.inner_stride[0], sa = plan.inner_stride[1], sb = plan.inner_stride[2];
    for_each_row(plan, [&](const std::array<int64_t, kMaxInputs>& off, int64_t o, int64_t n) {
      const bool* c = pc + off[0];
      const T* x = pa + off[1];
      const T* y = pb + off[2];
      T* dst = po + o;
      if (sc != 0 && sa != 0 && sb != 0) {
        for (int64_t i = 0; i < n; ++i) dst[i] = c[i] ? x[i] : y[i];
      } else {
        for (int64_t i = 0; i < n; ++i) dst[i] = c[i * sc] ? x[i * sa] : y[i * sb];
      }
    });
  });
}

void CpuBackend::clip(const Tensor& x, double lo, double hi, Tensor& out) {
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = Compute<T>;
    const C l = convert_from_double<C>(lo), h = convert_from_double<C>(hi);
    map_unary<T, T>(x, out, [l, h](C v) { return clip_to(v, l, h); });
  });
}

void CpuBackend::sum_to(const Tensor& x, Tensor& out) {
  // Reduce the leading axes x has beyond out's rank and the axes where out has size 1; out's
  // memory viewed with x's rank is exactly the keepdims result of that reduction.
  const int r = x.rank(), lead = x.rank() - out.rank();
  std::vector<int> axes;
  std::vector<int64_t> kept(size_t(r), 1);
  for (int i = 0; i < r; ++i) {
    const int j = i - lead;
    if (j < 0 || (out.shape()[j] == 1 && x.shape()[i] != 1)) {
      axes.push_back(i);
    } else {
      kept[size_t(i)] = x.shape()[i];
    }
  }
  auto view = std::make_shared<TensorImpl>(*out.impl());
  view->shape = Shape(std::move(kept));
  view->grad_node = nullptr;
  Tensor out_view(std::move(view));
  reduce(ReduceOp::kSum, x, axes, out_view);
}

}  // namespace strata
