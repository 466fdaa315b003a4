// One-input elementwise kernels on the GPU: cast, unary math and clip (binary ops and where are
// in cuda_binary.cu, sum_to in cuda_sum_to.cu). The semantics are the CPU's (cpu_elementwise.cc):
// the same dtypes accepted, 16-bit floats computed in float and rounded back on store, integer
// results that wrap, NaN passing through clip.
#include <string>
#include <type_traits>

#include "framework/cuda/cuda_backend.h"
#include "framework/cuda/elementwise_math.cuh"
#include "framework/cuda/kernel_utils.cuh"

namespace strata {
namespace {

using cuda::acc_t;
using cuda::convert;
using cuda::Math;

// out[i] = f(in[i]) over contiguous memory; f maps In to Out (storage types). No __restrict__:
// out may be x itself (an in-place update), which each thread reads before it writes.
template <typename In, typename Out, typename F>
__global__ void map_kernel(const In* in, Out* out, int64_t n, F f) {
  STRATA_GRID_STRIDE_LOOP(i, n) out[i] = f(in[i]);
}

template <typename In, typename Out, typename F>
void launch_map(const Tensor& x, Tensor& out, F f, const char* what) {
  const int64_t n = x.numel();
  if (n == 0) return;
  cuda::DeviceGuard guard(out.device());
  map_kernel<<<cuda::blocks_for(n), cuda::kThreadsPerBlock, 0, cuda::stream(out.device())>>>(
      cuda::device_ptr<const In>(x), cuda::device_ptr<Out>(out), n, f);
  cuda::check_launch(what, out.device().index);
}

// ---- cast ------------------------------------------------------------------------------------

template <typename From, typename To>
struct CastFn {
  __device__ __forceinline__ To operator()(From v) const { return convert<To>(v); }
};

// ---- unary -----------------------------------------------------------------------------------

constexpr bool writes_bool(UnaryOp op) {
  return op == UnaryOp::kLogicalNot || op == UnaryOp::kIsNan || op == UnaryOp::kIsFinite;
}

// Whether the CPU defines `op` on compute type C: the bool-valued tests on every dtype, all math
// on floats, and the sign/magnitude/rounding ops on integers (not bool).
template <UnaryOp Op, typename C>
constexpr bool unary_supported() {
  if (writes_bool(Op) || std::is_floating_point_v<C>) return true;
  if (std::is_same_v<C, bool>) return false;
  return Op == UnaryOp::kNeg || Op == UnaryOp::kAbs || Op == UnaryOp::kSign ||
         Op == UnaryOp::kSquare || Op == UnaryOp::kFloor || Op == UnaryOp::kCeil ||
         Op == UnaryOp::kRound;
}

// The value of `Op` at v, computed in C (float for the 16-bit types).
template <UnaryOp Op, typename C>
__device__ __forceinline__ auto unary_value(C v) {
  if constexpr (Op == UnaryOp::kLogicalNot) {
    return v == C(0);
  } else if constexpr (Op == UnaryOp::kIsNan) {
    return v != v;
  } else if constexpr (Op == UnaryOp::kIsFinite) {
    if constexpr (std::is_floating_point_v<C>) {
      return Math<C>::abs(v) <= std::numeric_limits<C>::max();  // false for inf and NaN
    } else {
      return true;
    }
  } else if constexpr (std::is_floating_point_v<C>) {
    using M = Math<C>;
    if constexpr (Op == UnaryOp::kNeg) return -v;
    else if constexpr (Op == UnaryOp::kAbs) return M::abs(v);
    else if constexpr (Op == UnaryOp::kSign) return kernels_math::sign_of(v);
    else if constexpr (Op == UnaryOp::kExp) return M::exp(v);
    else if constexpr (Op == UnaryOp::kLog) return M::log(v);
    else if constexpr (Op == UnaryOp::kLog1p) return M::log1p(v);
    else if constexpr (Op == UnaryOp::kExpm1) return M::expm1(v);
    else if constexpr (Op == UnaryOp::kSqrt) return M::sqrt(v);
    // 1 / sqrt(v) with both steps correctly rounded, as the CPU (not the approximate rsqrt).
    else if constexpr (Op == UnaryOp::kRsqrt) return C(1) / M::sqrt(v);
    else if constexpr (Op == UnaryOp::kSquare) return v * v;
    else if constexpr (Op == UnaryOp::kReciprocal) return C(1) / v;
    else if constexpr (Op == UnaryOp::kSin) return M::sin(v);
    else if constexpr (Op == UnaryOp::kCos) return M::cos(v);
    else if constexpr (Op == UnaryOp::kTanh) return M::tanh(v);
    else if constexpr (Op == UnaryOp::kSigmoid) return C(1) / (C(1) + M::exp(-v));
    else if constexpr (Op == UnaryOp::kFloor) return M::floor(v);
    else if constexpr (Op == UnaryOp::kCeil) return M::ceil(v);
    else return M::rint(v);  // kRound: half to even, as TensorFlow's round
  } else {
    // uint8 has no negative values: abs is the identity and sign 0 or 1.
    if constexpr (Op == UnaryOp::kNeg) return kernels_math::wrap_neg(v);
    else if constexpr (Op == UnaryOp::kAbs) return kernels_math::wrap_abs(v);
    else if constexpr (Op == UnaryOp::kSign) return kernels_math::sign_of(v);
    else if constexpr (Op == UnaryOp::kSquare) return kernels_math::wrap_mul(v, v);
    else return v;  // kFloor, kCeil, kRound: integers are already whole
  }
}

template <typename T, UnaryOp Op>
struct UnaryFn {
  using Out = std::conditional_t<writes_bool(Op), bool, T>;
  __device__ __forceinline__ Out operator()(T v) const {
    return convert<Out>(unary_value<Op>(cuda::to_acc(v)));
  }
};

template <typename T, UnaryOp Op>
void run_unary(const Tensor& x, Tensor& out) {
  if constexpr (unary_supported<Op, acc_t<T>>()) {
    using F = UnaryFn<T, Op>;
    launch_map<T, typename F::Out>(x, out, F{}, "unary");
  } else {
    throw DTypeError(std::string("unary op: not supported for dtype ") + dtype_name(x.dtype()));
  }
}

template <typename T>
void unary_typed(UnaryOp op, const Tensor& x, Tensor& out) {
  switch (op) {
    case UnaryOp::kNeg: return run_unary<T, UnaryOp::kNeg>(x, out);
    case UnaryOp::kAbs: return run_unary<T, UnaryOp::kAbs>(x, out);
    case UnaryOp::kSign: return run_unary<T, UnaryOp::kSign>(x, out);
    case UnaryOp::kExp: return run_unary<T, UnaryOp::kExp>(x, out);
    case UnaryOp::kLog: return run_unary<T, UnaryOp::kLog>(x, out);
    case UnaryOp::kLog1p: return run_unary<T, UnaryOp::kLog1p>(x, out);
    case UnaryOp::kExpm1: return run_unary<T, UnaryOp::kExpm1>(x, out);
    case UnaryOp::kSqrt: return run_unary<T, UnaryOp::kSqrt>(x, out);
    case UnaryOp::kRsqrt: return run_unary<T, UnaryOp::kRsqrt>(x, out);
    case UnaryOp::kSquare: return run_unary<T, UnaryOp::kSquare>(x, out);
    case UnaryOp::kReciprocal: return run_unary<T, UnaryOp::kReciprocal>(x, out);
    case UnaryOp::kSin: return run_unary<T, UnaryOp::kSin>(x, out);
    case UnaryOp::kCos: return run_unary<T, UnaryOp::kCos>(x, out);
    case UnaryOp::kTanh: return run_unary<T, UnaryOp::kTanh>(x, out);
    case UnaryOp::kSigmoid: return run_unary<T, UnaryOp::kSigmoid>(x, out);
    case UnaryOp::kFloor: return run_unary<T, UnaryOp::kFloor>(x, out);
    case UnaryOp::kCeil: return run_unary<T, UnaryOp::kCeil>(x, out);
    case UnaryOp::kRound: return run_unary<T, UnaryOp::kRound>(x, out);
    case UnaryOp::kLogicalNot: return run_unary<T, UnaryOp::kLogicalNot>(x, out);
    case UnaryOp::kIsNan: return run_unary<T, UnaryOp::kIsNan>(x, out);
    case UnaryOp::kIsFinite: return run_unary<T, UnaryOp::kIsFinite>(x, out);
  }
  throw DTypeError(std::string("unary op: not supported for dtype ") + dtype_name(x.dtype()));
}

// ---- clip ------------------------------------------------------------------------------------

// clip_to in the compute type: NaN passes through.
template <typename T>
struct ClipFn {
  acc_t<T> lo, hi;
  __device__ __forceinline__ T operator()(T x) const {
    return convert<T>(kernels_math::clip_to(cuda::to_acc(x), lo, hi));
  }
};

}  // namespace

void CudaBackend::cast(const Tensor& x, Tensor& out) {
  if (x.dtype() == out.dtype()) {
    if (x.nbytes() && x.raw_data() != out.raw_data()) {
      cuda::DeviceGuard guard(out.device());
      STRATA_CUDA_CHECK(cudaMemcpyAsync(out.raw_data(), x.raw_data(), x.nbytes(),
                                        cudaMemcpyDeviceToDevice, cuda::stream(out.device())),
                        out.device().index);
    }
    return;
  }
  cuda::visit_cuda_dtype(x.dtype(), [&](auto from_tag) {
    using From = decltype(from_tag);
    cuda::visit_cuda_dtype(out.dtype(), [&](auto to_tag) {
      using To = decltype(to_tag);
      launch_map<From, To>(x, out, CastFn<From, To>{}, "cast");
    });
  });
}

void CudaBackend::unary(UnaryOp op, const Tensor& x, Tensor& out) {
  cuda::visit_cuda_dtype(x.dtype(), [&](auto tag) { unary_typed<decltype(tag)>(op, x, out); });
}

void CudaBackend::clip(const Tensor& x, double lo, double hi, Tensor& out) {
  cuda::visit_cuda_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = acc_t<T>;
    const ClipFn<T> f{kernels_math::convert_from_double<C>(lo),
                      kernels_math::convert_from_double<C>(hi)};
    launch_map<T, T>(x, out, f, "clip_by_value");
  });
}

}  // namespace strata
