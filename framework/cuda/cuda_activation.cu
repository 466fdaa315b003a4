// Activations on the GPU: own elementwise kernels, forward and backward, for every Activation.
// cuDNN's activation API is deprecated in cuDNN 9 and covers only a few of them, so none of it is
// used. The formulas are the CPU backend's (oneDNN 2.6's eltwise reference formulas, and
// cpu_dnnl_eltwise.cc's own loops for SELU, hard sigmoid and softsign) term by term, including
// their NaN behaviour and the bounds that keep exp() from overflowing. 16-bit types compute in
// float; float64 computes in double with the same formulas.
#include <cuda_runtime.h>

#include <string>

#include "framework/cuda/cuda_backend.h"
#include "framework/cuda/kernel_utils.cuh"
#include "framework/kernels_math/activation_rules.h"

namespace strata {
namespace {

using cuda::acc_t;
using cuda::from_acc;
using cuda::to_acc;

// Constants in the precision A computes in. The float values are oneDNN's float literals.
template <typename A>
struct Consts;
template <>
struct Consts<float> {
  static constexpr float kSeluAlpha = 1.6732632423543772f;
  static constexpr float kSeluScale = 1.0507009873554805f;
  static constexpr float kSqrtHalf = 0.707106769084930419921875f;       // 1/sqrt(2)
  static constexpr float kTwoOverSqrtPi = 1.12837922573089599609375f;   // 2/sqrt(pi)
  static constexpr float kSqrtTwoOverPi = 0.79788458347320556640625f;   // sqrt(2/pi)
  static constexpr float kGeluCubic = 0.044715f;
};
template <>
struct Consts<double> {
  static constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
  static constexpr double kSeluScale = 1.0507009873554804934193349852946;
  static constexpr double kSqrtHalf = 0.70710678118654752440084436210485;
  static constexpr double kTwoOverSqrtPi = 1.1283791670955125738961589031215;
  static constexpr double kSqrtTwoOverPi = 0.79788456080286535587989211986876;
  static constexpr double kGeluCubic = 0.044715;
};

// Float or double versions of the libm functions, picked by type.
template <typename A> __device__ __forceinline__ A d_exp(A v) {
  if constexpr (std::is_same_v<A, float>) return expf(v); else return exp(v);
}
template <typename A> __device__ __forceinline__ A d_expm1(A v) {
  if constexpr (std::is_same_v<A, float>) return expm1f(v); else return expm1(v);
}
template <typename A> __device__ __forceinline__ A d_erf(A v) {
  if constexpr (std::is_same_v<A, float>) return erff(v); else return erf(v);
}
template <typename A> __device__ __forceinline__ A d_tanh(A v) {
  if constexpr (std::is_same_v<A, float>) return tanhf(v); else return tanh(v);
}
template <typename A> __device__ __forceinline__ A d_fmin(A a, A b) {
  if constexpr (std::is_same_v<A, float>) return fminf(a, b); else return fmin(a, b);
}
template <typename A> __device__ __forceinline__ A d_fabs(A v) {
  if constexpr (std::is_same_v<A, float>) return fabsf(v); else return fabs(v);
}
template <typename A> __device__ __forceinline__ A d_fmax(A a, A b) {
  if constexpr (std::is_same_v<A, float>) return fmaxf(a, b); else return fmax(a, b);
}

// The logistic function and softplus: the CPU backend's own (kernels_math/activation_rules.h).
using kernels_math::logistic;
using kernels_math::softplus;

template <typename A>
__device__ __forceinline__ A activate(Activation act, A v, A alpha) {
  using C = Consts<A>;
  switch (act) {
    case Activation::kReLU: return v > A(0) ? v : v * A(0);
    case Activation::kLeakyReLU: return v > A(0) ? v : v * alpha;
    case Activation::kELU: return v > A(0) ? v : alpha * d_expm1(v);
    case Activation::kSELU: return C::kSeluScale * (v > A(0) ? v : C::kSeluAlpha * d_expm1(v));
    case Activation::kGELU: return A(0.5) * v * (A(1) + d_erf(v * C::kSqrtHalf));
    case Activation::kGELUTanh:
      return A(0.5) * v *
             (A(1) + d_tanh(C::kSqrtTwoOverPi * v * (A(1) + C::kGeluCubic * v * v)));
    case Activation::kSigmoid: return logistic(v);
    case Activation::kTanh: return d_tanh(v);
    case Activation::kSwish: return v * logistic(v);
    case Activation::kSoftplus: return softplus(v);
    case Activation::kReLU6: {  // oneDNN's clip_v2(0, 6): NaN becomes 0
      const A s = v > A(0) ? v : A(0);
      return s < A(6) ? s : A(6);
    }
    case Activation::kHardSigmoid:  // Keras 3: relu6(x + 3) / 6
      return d_fmin(A(1), d_fmax(A(0), v * (A(1) / A(6)) + A(0.5)));
    case Activation::kSoftsign: return v / (A(1) + d_fabs(v));
    case Activation::kHardSwish:  // oneDNN's hardswish: x * clip(x + 3, 0, 6) / 6
      return v * d_fmin(A(6), d_fmax(A(0), v + A(3))) / A(6);
    case Activation::kMish: return v * d_tanh(softplus(v));
    case Activation::kLogSigmoid: return -softplus(-v);
    case Activation::kExponential: return d_exp(v);
    case Activation::kHardTanh: {  // clip_v2(-1, 1), NaN to the lower bound like ReLU6's
      const A s = v > A(-1) ? v : A(-1);
      return s < A(1) ? s : A(1);
    }
    case Activation::kLinear: return v;
  }
  return v;
}

// dx = dy * act'(v).
template <typename A>
__device__ __forceinline__ A activate_backward(Activation act, A v, A dy, A alpha) {
  using C = Consts<A>;
  switch (act) {
    case Activation::kReLU: return v > A(0) ? dy : dy * A(0);
    case Activation::kLeakyReLU: return v > A(0) ? dy : dy * alpha;
    case Activation::kELU: return dy * (v > A(0) ? A(1) : alpha * d_exp(v));
    case Activation::kSELU:
      return dy * C::kSeluScale * (v > A(0) ? A(1) : C::kSeluAlpha * d_exp(v));
    case Activation::kGELU: {
      const A u = v * C::kSqrtHalf;
      return dy * A(0.5) * (A(1) + d_erf(u) + u * C::kTwoOverSqrtPi * d_exp(-u * u));
    }
    case Activation::kGELUTanh: {
      const A g = v * C::kSqrtTwoOverPi * (A(1) + C::kGeluCubic * v * v);
      const A dg = C::kSqrtTwoOverPi * (A(1) + A(3) * C::kGeluCubic * v * v);
      const A t = d_tanh(g);
      return dy * A(0.5) * (A(1) + t) * (A(1) + v * (A(1) - t) * dg);
    }
    case Activation::kSigmoid: {
      const A s = logistic(v);
      return dy * s * (A(1) - s);
    }
    case Activation::kTanh: {
      const A t = d_tanh(v);
      return dy * (A(1) - t) * (A(1) + t);
    }
    case Activation::kSwish: {
      const A s = logistic(v);
      return dy * (s + v * s * (A(1) - s));
    }
    case Activation::kSoftplus: return dy * logistic(v);
    case Activation::kReLU6: return dy * ((A(0) < v && v < A(6)) ? A(1) : A(0));
    case Activation::kHardSigmoid:
      return (v > A(-3) && v < A(3)) ? dy * (A(1) / A(6)) : A(0);
    case Activation::kSoftsign: {
      const A d = A(1) + d_fabs(v);
      return dy / (d * d);
    }
    case Activation::kHardSwish:  // oneDNN: 0 below -3, 1 above 3, (2x + 3) / 6 between
      return v < A(-3) ? A(0) : v > A(3) ? dy : dy * (A(2) * v + A(3)) / A(6);
    case Activation::kMish: {  // tanh(sp) + x * (1 - tanh(sp)^2) * sigmoid(x)
      const A t = d_tanh(softplus(v));
      return dy * (t + v * (A(1) - t * t) * logistic(v));
    }
    case Activation::kLogSigmoid: return dy * logistic(-v);
    case Activation::kExponential: return dy * d_exp(v);
    case Activation::kHardTanh: return dy * ((A(-1) < v && v < A(1)) ? A(1) : A(0));
    case Activation::kLinear: return dy;
  }
  return dy;
}

template <typename T>
__global__ void activation_forward_kernel(Activation act, const T* __restrict__ x,
                                          T* __restrict__ y, int64_t n, acc_t<T> alpha) {
  STRATA_GRID_STRIDE_LOOP(i, n) { y[i] = from_acc<T>(activate(act, to_acc(x[i]), alpha)); }
}

template <typename T>
__global__ void activation_backward_kernel(Activation act, const T* __restrict__ x,
                                           const T* __restrict__ dy, T* __restrict__ dx,
                                           int64_t n, acc_t<T> alpha) {
  STRATA_GRID_STRIDE_LOOP(i, n) {
    dx[i] = from_acc<T>(activate_backward(act, to_acc(x[i]), to_acc(dy[i]), alpha));
  }
}

template <typename Fn>
void visit_floating(DType dtype, const char* op, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat32: return fn(float{});
    case DType::kFloat64: return fn(double{});
    case DType::kFloat16: return fn(__half{});
    case DType::kBFloat16: return fn(__nv_bfloat16{});
    default: break;
  }
  throw DTypeError(std::string(op) + ": the CUDA backend computes activations in floating "
                   "dtypes (float16, bfloat16, float32, float64), got " + dtype_name(dtype));
}

// Keras' relu has no slope; the CPU ignores alpha for it too.
float effective_alpha(Activation act, float alpha) {
  return act == Activation::kReLU ? 0.0f : alpha;
}

}  // namespace

void CudaBackend::activation_forward(Activation act, const Tensor& x, float alpha, Tensor& y) {
  cuda::DeviceGuard guard(y.device());
  const int64_t n = x.numel();
  STRATA_CHECK(y.numel() == n && y.dtype() == x.dtype());
  visit_floating(x.dtype(), "activation", [](auto) {});  // DTypeError before any early return
  if (n == 0) return;
  cudaStream_t stream = cuda::stream(y.device());
  if (act == Activation::kLinear) {
    if (x.raw_data() != y.raw_data()) {
      STRATA_CUDA_CHECK(cudaMemcpyAsync(y.raw_data(), x.raw_data(), x.nbytes(),
                                        cudaMemcpyDeviceToDevice, stream),
                        y.device().index);
    }
    return;
  }
  const float a = effective_alpha(act, alpha);
  visit_floating(x.dtype(), "activation", [&](auto tag) {
    using T = decltype(tag);
    activation_forward_kernel<T><<<cuda::blocks_for(n), cuda::kThreadsPerBlock, 0, stream>>>(
        act, cuda::device_ptr<const T>(x), cuda::device_ptr<T>(y), n, acc_t<T>(a));
  });
  cuda::check_launch("activation_forward_kernel", y.device().index);
}

void CudaBackend::activation_backward(Activation act, const Tensor& x, const Tensor& y,
                                      const Tensor& dy, float alpha, Tensor& dx) {
  cuda::DeviceGuard guard(dx.device());
  const int64_t n = x.numel();
  STRATA_CHECK(dy.numel() == n && dx.numel() == n && dy.dtype() == x.dtype() &&
               dx.dtype() == x.dtype());
  visit_floating(x.dtype(), "activation_backward", [](auto) {});
  if (n == 0) return;
  cudaStream_t stream = cuda::stream(dx.device());
  if (act == Activation::kLinear) {
    if (dy.raw_data() != dx.raw_data()) {
      STRATA_CUDA_CHECK(cudaMemcpyAsync(dx.raw_data(), dy.raw_data(), dy.nbytes(),
                                        cudaMemcpyDeviceToDevice, stream),
                        dx.device().index);
    }
    return;
  }
  const float a = effective_alpha(act, alpha);
  visit_floating(x.dtype(), "activation_backward", [&](auto tag) {
    using T = decltype(tag);
    activation_backward_kernel<T><<<cuda::blocks_for(n), cuda::kThreadsPerBlock, 0, stream>>>(
        act, cuda::device_ptr<const T>(x), cuda::device_ptr<const T>(dy), cuda::device_ptr<T>(dx),
        n, acc_t<T>(a));
  });
  cuda::check_launch("activation_backward_kernel", dx.device().index);
}

}  // namespace strata
