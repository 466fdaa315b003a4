// Broadcasting kernels on the GPU: binary ops (arithmetic, comparisons and logic) and where.
// The semantics are the CPU's (cpu_elementwise.cc): NumPy broadcasting to out's shape, 16-bit
// floats computed in float, NaN propagating through maximum/minimum/add_relu, integer division
// and modulo in Python's floor forms with x / 0 = x % 0 = 0, integer arithmetic that wraps.
//
// Each input is read in one of a few ways, chosen once per call (see Operand): contiguously (it
// has out's shape), as one scalar, as a repeated or held block (one division per element), or
// through a strided indexer (any other broadcast, a div/mod per dimension). The common case,
// both inputs of out's shape, has a kernel of its own with plain indexing.
#include <string>
#include <type_traits>

#include "framework/cuda/cuda_backend.h"
#include "framework/cuda/elementwise_math.cuh"
#include "framework/cuda/kernel_utils.cuh"

namespace strata {
namespace {

using cuda::acc_t;
using cuda::convert;

// How a kernel reads one input at output position i. Besides the general strided walk (a div
// and a mod per dimension), the two broadcasts of most layers get one division each: an input
// equal to out's trailing dimensions (a bias [C] against [N, C]) repeats every `period`
// elements, and one equal to out's leading dimensions followed by 1s ([N, 1] against [N, C])
// holds each element for `period` outputs.
struct Operand {
  enum Mode : int { kContiguous, kScalar, kRepeat, kHold, kStrided };
  int mode = kContiguous;
  int64_t period = 1;       // kRepeat, kHold
  cuda::StridedIndexer ix;  // kStrided

  __device__ __forceinline__ int64_t at(int64_t i) const {
    switch (mode) {
      case kContiguous: return i;
      case kScalar: return 0;
      case kRepeat: return i % period;
      case kHold: return i / period;
      default: return ix.offset(i);
    }
  }
};

Operand operand_for(const Tensor& in, const Tensor& out) {
  Operand op;
  const Shape& s = in.shape();
  const Shape& o = out.shape();
  // An input broadcastable to out with as many elements has out's layout exactly (broadcasting
  // only stretches size-1 dimensions).
  if (in.numel() == out.numel()) {
    op.mode = Operand::kContiguous;
    return op;
  }
  if (in.numel() == 1) {
    op.mode = Operand::kScalar;
    return op;
  }
  // in's dims aligned to out's (1 where in has none): trailing ones equal to out's from `first`
  // on and 1 before means kRepeat; equal up to `last` and 1 after means kHold.
  const int rank = o.rank(), lead = o.rank() - s.rank();
  const auto dim_of_in = [&](int d) { return d < lead ? int64_t(1) : s.dim(d - lead); };
  int first = rank;  // in equals out on [first, rank)
  while (first > 0 && dim_of_in(first - 1) == o.dim(first - 1)) --first;
  bool ones_before = true;
  for (int d = 0; d < first; ++d) ones_before = ones_before && dim_of_in(d) == 1;
  if (ones_before) {
    op.mode = Operand::kRepeat;
    op.period = in.numel();
    return op;
  }
  int last = 0;  // in equals out on [0, last)
  while (last < rank && dim_of_in(last) == o.dim(last)) ++last;
  bool ones_after = true;
  for (int d = last; d < rank; ++d) ones_after = ones_after && dim_of_in(d) == 1;
  if (ones_after) {
    op.mode = Operand::kHold;
    op.period = out.numel() / in.numel();
    return op;
  }
  op.mode = Operand::kStrided;
  op.ix = cuda::broadcast_indexer(s, o);
  return op;
}

// ---- binary ----------------------------------------------------------------------------------

constexpr bool writes_bool(BinaryOp op) { return op >= BinaryOp::kEqual; }

// Whether the CPU defines `op` on compute type C: comparisons, logic, maximum and minimum on
// every dtype; arithmetic on floats (add_relu on floats only) and on integers, never on bool.
template <BinaryOp Op, typename C>
constexpr bool binary_supported() {
  if (writes_bool(Op) || Op == BinaryOp::kMaximum || Op == BinaryOp::kMinimum) return true;
  if (std::is_floating_point_v<C>) return true;
  if (std::is_same_v<C, bool>) return false;
  return Op != BinaryOp::kAddReLU;
}

template <BinaryOp Op, typename C>
__device__ __forceinline__ auto binary_value(C x, C y) {
  if constexpr (Op == BinaryOp::kEqual) return x == y;
  else if constexpr (Op == BinaryOp::kNotEqual) return x != y;
  else if constexpr (Op == BinaryOp::kLess) return x < y;
  else if constexpr (Op == BinaryOp::kLessEqual) return x <= y;
  else if constexpr (Op == BinaryOp::kGreater) return x > y;
  else if constexpr (Op == BinaryOp::kGreaterEqual) return x >= y;
  else if constexpr (Op == BinaryOp::kLogicalAnd) return x != C(0) && y != C(0);
  else if constexpr (Op == BinaryOp::kLogicalOr) return x != C(0) || y != C(0);
  // NaN propagates, as numpy.maximum / numpy.minimum.
  else if constexpr (Op == BinaryOp::kMaximum) return kernels_math::maximum_nan(x, y);
  else if constexpr (Op == BinaryOp::kMinimum) return kernels_math::minimum_nan(x, y);
  else if constexpr (std::is_floating_point_v<C>) {
    if constexpr (Op == BinaryOp::kAdd) return x + y;
    else if constexpr (Op == BinaryOp::kSub) return x - y;
    else if constexpr (Op == BinaryOp::kMul) return x * y;
    else if constexpr (Op == BinaryOp::kDiv) return x / y;
    else if constexpr (Op == BinaryOp::kPow) return cuda::Math<C>::pow(x, y);
    else if constexpr (Op == BinaryOp::kFloorMod) return kernels_math::float_floormod(x, y);
    else return kernels_math::add_relu(x, y);  // kAddReLU; NaN propagates, as relu(NaN) does
  } else {
    if constexpr (Op == BinaryOp::kAdd) return kernels_math::wrap_add(x, y);
    else if constexpr (Op == BinaryOp::kSub) return kernels_math::wrap_sub(x, y);
    else if constexpr (Op == BinaryOp::kMul) return kernels_math::wrap_mul(x, y);
    else if constexpr (Op == BinaryOp::kDiv) return kernels_math::int_floordiv(x, y);
    else if constexpr (Op == BinaryOp::kPow) return kernels_math::int_pow(x, y);
    else return kernels_math::int_floormod(x, y);  // kFloorMod
  }
}

template <typename T, BinaryOp Op>
struct BinaryFn {
  using Out = std::conditional_t<writes_bool(Op), bool, T>;
  __device__ __forceinline__ Out operator()(T x, T y) const {
    return convert<Out>(binary_value<Op>(cuda::to_acc(x), cuda::to_acc(y)));
  }
};

template <typename T, typename O, typename F>
__global__ void binary_same_shape_kernel(const T* a, const T* b, O* out, int64_t n, F f) {
  STRATA_GRID_STRIDE_LOOP(i, n) out[i] = f(a[i], b[i]);
}

template <typename T, typename O, typename F>
__global__ void binary_broadcast_kernel(const T* a, Operand oa, const T* b, Operand ob, O* out,
                                        int64_t n, F f) {
  STRATA_GRID_STRIDE_LOOP(i, n) out[i] = f(a[oa.at(i)], b[ob.at(i)]);
}

template <typename T, BinaryOp Op>
void run_binary(const Tensor& a, const Tensor& b, Tensor& out) {
  if constexpr (binary_supported<Op, acc_t<T>>()) {
    using F = BinaryFn<T, Op>;
    using O = typename F::Out;
    const int64_t n = out.numel();
    const unsigned blocks = cuda::blocks_for(n);
    cudaStream_t stream = cuda::stream(out.device());
    const T* pa = cuda::device_ptr<const T>(a);
    const T* pb = cuda::device_ptr<const T>(b);
    O* po = cuda::device_ptr<O>(out);
    if (a.numel() == n && b.numel() == n) {
      binary_same_shape_kernel<<<blocks, cuda::kThreadsPerBlock, 0, stream>>>(pa, pb, po, n, F{});
    } else {
      binary_broadcast_kernel<<<blocks, cuda::kThreadsPerBlock, 0, stream>>>(
          pa, operand_for(a, out), pb, operand_for(b, out), po, n, F{});
    }
    cuda::check_launch("binary", out.device().index);
  } else {
    throw DTypeError(std::string("binary op: arithmetic is not supported for dtype ") +
                     dtype_name(a.dtype()));
  }
}

template <typename T>
void binary_typed(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) {
  switch (op) {
    case BinaryOp::kAdd: return run_binary<T, BinaryOp::kAdd>(a, b, out);
    case BinaryOp::kSub: return run_binary<T, BinaryOp::kSub>(a, b, out);
    case BinaryOp::kMul: return run_binary<T, BinaryOp::kMul>(a, b, out);
    case BinaryOp::kDiv: return run_binary<T, BinaryOp::kDiv>(a, b, out);
    case BinaryOp::kPow: return run_binary<T, BinaryOp::kPow>(a, b, out);
    case BinaryOp::kMaximum: return run_binary<T, BinaryOp::kMaximum>(a, b, out);
    case BinaryOp::kMinimum: return run_binary<T, BinaryOp::kMinimum>(a, b, out);
    case BinaryOp::kFloorMod: return run_binary<T, BinaryOp::kFloorMod>(a, b, out);
    case BinaryOp::kAddReLU: return run_binary<T, BinaryOp::kAddReLU>(a, b, out);
    case BinaryOp::kEqual: return run_binary<T, BinaryOp::kEqual>(a, b, out);
    case BinaryOp::kNotEqual: return run_binary<T, BinaryOp::kNotEqual>(a, b, out);
    case BinaryOp::kLess: return run_binary<T, BinaryOp::kLess>(a, b, out);
    case BinaryOp::kLessEqual: return run_binary<T, BinaryOp::kLessEqual>(a, b, out);
    case BinaryOp::kGreater: return run_binary<T, BinaryOp::kGreater>(a, b, out);
    case BinaryOp::kGreaterEqual: return run_binary<T, BinaryOp::kGreaterEqual>(a, b, out);
    case BinaryOp::kLogicalAnd: return run_binary<T, BinaryOp::kLogicalAnd>(a, b, out);
    case BinaryOp::kLogicalOr: return run_binary<T, BinaryOp::kLogicalOr>(a, b, out);
  }
  throw DTypeError(std::string("binary op: arithmetic is not supported for dtype ") +
                   dtype_name(a.dtype()));
}

// ---- where -----------------------------------------------------------------------------------

template <typename T>
__global__ void where_kernel(const bool* cond, Operand oc, const T* a, Operand oa, const T* b,
                             Operand ob, T* out, int64_t n) {
  STRATA_GRID_STRIDE_LOOP(i, n) out[i] = cond[oc.at(i)] ? a[oa.at(i)] : b[ob.at(i)];
}

}  // namespace

void CudaBackend::binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) {
  if (out.numel() == 0) return;
  cuda::DeviceGuard guard(out.device());
  cuda::visit_cuda_dtype(a.dtype(), [&](auto tag) { binary_typed<decltype(tag)>(op, a, b, out); });
}

void CudaBackend::where(const Tensor& cond, const Tensor& a, const Tensor& b, Tensor& out) {
  const int64_t n = out.numel();
  if (n == 0) return;
  cuda::DeviceGuard guard(out.device());
  const Operand oc = operand_for(cond, out), oa = operand_for(a, out), ob = operand_for(b, out);
  cudaStream_t stream = cuda::stream(out.device());
  cuda::visit_cuda_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    where_kernel<T><<<cuda::blocks_for(n), cuda::kThreadsPerBlock, 0, stream>>>(
        cuda::device_ptr<const bool>(cond), oc, cuda::device_ptr<const T>(a), oa,
        cuda::device_ptr<const T>(b), ob, cuda::device_ptr<T>(out), n);
  });
  cuda::check_launch("where", out.device().index);
}

}  // namespace strata
