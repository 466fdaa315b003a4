// Internal to the CUDA backend's elementwise kernels: what the device needs besides the scalar
// rules it shares with the CPU (framework/kernels_math/elementwise_rules.h: wrapping integer
// arithmetic, Python's floor division and modulo, saturating conversions, NaN propagation):
// the conversion between the device's storage types (__half, __nv_bfloat16) and the float
// math functions by compute type. So no input is undefined behaviour, and every result equals
// the CPU's.
#pragma once

#include <cuda_runtime.h>

#include <limits>
#include <type_traits>

#include "framework/cuda/kernel_utils.cuh"
#include "framework/kernels_math/elementwise_rules.h"

namespace strata::cuda {

template <typename T>
constexpr bool kIsHalfLike = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

// Converts one element between storage types, as the CPU's convert<To>(From).
template <typename To, typename From>
__device__ __forceinline__ To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else {
    using F = acc_t<From>;
    const F c = to_acc(v);
    if constexpr (std::is_same_v<To, bool>) {
      return c != F(0);
    } else if constexpr (kIsHalfLike<To>) {
      return from_acc<To>(float(c));
    } else if constexpr (std::is_floating_point_v<F> && std::is_integral_v<To>) {
      return kernels_math::saturate_to_integer<To>(c);
    } else {
      return static_cast<To>(c);  // integer narrowing keeps the low bits, as C++20 defines
    }
  }
}

// ---- floating-point math in the compute type (float or double) -----------------------------
// Named overloads rather than the unqualified ::exp etc., so float never silently goes through
// the double version (or the reverse) whatever the host headers declare.

template <typename C>
struct Math;

template <>
struct Math<float> {
  static __device__ __forceinline__ float abs(float v) { return fabsf(v); }
  static __device__ __forceinline__ float exp(float v) { return expf(v); }
  static __device__ __forceinline__ float log(float v) { return logf(v); }
  static __device__ __forceinline__ float log1p(float v) { return log1pf(v); }
  static __device__ __forceinline__ float expm1(float v) { return expm1f(v); }
  static __device__ __forceinline__ float sqrt(float v) { return sqrtf(v); }
  static __device__ __forceinline__ float sin(float v) { return sinf(v); }
  static __device__ __forceinline__ float cos(float v) { return cosf(v); }
  static __device__ __forceinline__ float tanh(float v) { return tanhf(v); }
  static __device__ __forceinline__ float floor(float v) { return floorf(v); }
  static __device__ __forceinline__ float ceil(float v) { return ceilf(v); }
  static __device__ __forceinline__ float rint(float v) { return rintf(v); }
  static __device__ __forceinline__ float pow(float a, float b) { return powf(a, b); }
  static __device__ __forceinline__ float fmod(float a, float b) { return fmodf(a, b); }
};

template <>
struct Math<double> {
  static __device__ __forceinline__ double abs(double v) { return ::fabs(v); }
  static __device__ __forceinline__ double exp(double v) { return ::exp(v); }
  static __device__ __forceinline__ double log(double v) { return ::log(v); }
  static __device__ __forceinline__ double log1p(double v) { return ::log1p(v); }
  static __device__ __forceinline__ double expm1(double v) { return ::expm1(v); }
  static __device__ __forceinline__ double sqrt(double v) { return ::sqrt(v); }
  static __device__ __forceinline__ double sin(double v) { return ::sin(v); }
  static __device__ __forceinline__ double cos(double v) { return ::cos(v); }
  static __device__ __forceinline__ double tanh(double v) { return ::tanh(v); }
  static __device__ __forceinline__ double floor(double v) { return ::floor(v); }
  static __device__ __forceinline__ double ceil(double v) { return ::ceil(v); }
  static __device__ __forceinline__ double rint(double v) { return ::rint(v); }
  static __device__ __forceinline__ double pow(double a, double b) { return ::pow(a, b); }
  static __device__ __forceinline__ double fmod(double a, double b) { return ::fmod(a, b); }
};

}  // namespace strata::cuda
