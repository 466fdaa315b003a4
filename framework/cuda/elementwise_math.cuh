// Internal to the CUDA backend's elementwise kernels: the scalar semantics the CPU kernels define
// (cpu_elementwise.cc), written once for the device. Conversions saturate floats going to
// integers (NaN gives 0); integer arithmetic wraps (computed in the unsigned type); integer
// division and modulo are Python's floor forms, with x / 0 = x % 0 = 0. So no input is undefined
// behaviour, and every result equals the CPU's.
#pragma once

#include <cuda_runtime.h>

#include <limits>
#include <type_traits>

#include "framework/cuda/kernel_utils.cuh"

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
      if (!(c == c)) return To(0);
      if (c <= F(std::numeric_limits<To>::lowest())) return std::numeric_limits<To>::lowest();
      if (c >= F(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
      return To(c);
    } else {
      return static_cast<To>(c);  // integer narrowing keeps the low bits, as C++20 defines
    }
  }
}

// The same conversion from a host double, for scalars computed on the host (clip bounds).
template <typename C>
C convert_from_double(double v) {
  if constexpr (std::is_same_v<C, bool>) {
    return v != 0.0;
  } else if constexpr (std::is_floating_point_v<C>) {
    return static_cast<C>(v);
  } else {
    if (!(v == v)) return C(0);
    if (v <= double(std::numeric_limits<C>::lowest())) return std::numeric_limits<C>::lowest();
    if (v >= double(std::numeric_limits<C>::max())) return std::numeric_limits<C>::max();
    return C(v);
  }
}

// ---- wrapping integer arithmetic (signed overflow would be undefined behaviour) ------------

template <typename C>
__device__ __forceinline__ C wrap_add(C a, C b) {
  using U = std::make_unsigned_t<C>;
  return C(U(U(a) + U(b)));
}
template <typename C>
__device__ __forceinline__ C wrap_sub(C a, C b) {
  using U = std::make_unsigned_t<C>;
  return C(U(U(a) - U(b)));
}
template <typename C>
__device__ __forceinline__ C wrap_mul(C a, C b) {
  using U = std::make_unsigned_t<C>;
  return C(U(U(a) * U(b)));
}
template <typename C>
__device__ __forceinline__ C wrap_neg(C a) {
  return wrap_sub(C(0), a);
}

// Python-style floor division and modulo on integers; x / 0 and x % 0 give 0.
template <typename C>
__device__ __forceinline__ C int_floordiv(C a, C b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<C>) {
    if (b == -1) return wrap_neg(a);  // min / -1 overflows
    C q = C(a / b);
    if (a % b != 0 && ((a < 0) != (b < 0))) --q;
    return q;
  } else {
    return C(a / b);
  }
}
template <typename C>
__device__ __forceinline__ C int_floormod(C a, C b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<C>) {
    if (b == -1) return 0;
    C r = C(a % b);
    if (r != 0 && ((r < 0) != (b < 0))) r = C(r + b);
    return r;
  } else {
    return C(a % b);
  }
}
// Integer power by squaring, wrapping; a negative exponent leaves only |base| == 1 non-zero.
template <typename C>
__device__ __forceinline__ C int_pow(C base, C exponent) {
  if constexpr (std::is_signed_v<C>) {
    if (exponent < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exponent & 1) ? C(-1) : C(1);
      return 0;
    }
  }
  using U = std::make_unsigned_t<C>;
  U result = 1, b = U(base), e = U(exponent);
  while (e != 0) {
    if (e & 1u) result = U(result * b);
    b = U(b * b);
    e = U(e >> 1);
  }
  return C(result);
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

// Python's modulo on floats: the result takes the divisor's sign.
template <typename C>
__device__ __forceinline__ C float_floormod(C a, C b) {
  C r = Math<C>::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

}  // namespace strata::cuda
