// Internal: the scalar rules of the element-wise ops, one copy for the CPU and CUDA backends.
//
// cpu_elementwise.cc and the CUDA kernels (cuda_elementwise.cu, cuda_binary.cu) loop over
// tensors differently, but every element must come out the same on both devices, including on
// the inputs where C++ itself has no answer: integer arithmetic wraps (computed in the unsigned
// type, as signed overflow is undefined behaviour), integer division and modulo are Python's
// floor forms with x / 0 = x % 0 = 0, floats going to integers saturate (NaN gives 0), maximum,
// minimum and add_relu propagate NaN. These rules are therefore written once, here, and called
// by both loops; C is the compute type (float for the 16-bit floats, else the element type).
#pragma once

#include <math.h>

#include <limits>
#include <type_traits>

#include "framework/kernels_math/host_device.h"

namespace strata::kernels_math {

// ---- wrapping integer arithmetic (signed overflow would be undefined behaviour) ------------

template <typename C>
STRATA_HOST_DEVICE STRATA_INLINE C wrap_add(C a, C b) {
  using U = std::make_unsigned_t<C>;
  return C(U(U(a) + U(b)));
}
template <typename C>
STRATA_HOST_DEVICE STRATA_INLINE C wrap_sub(C a, C b) {
  using U = std::make_unsigned_t<C>;
  return C(U(U(a) - U(b)));
}
template <typename C>
STRATA_HOST_DEVICE STRATA_INLINE C wrap_mul(C a, C b) {
  using U = std::make_unsigned_t<C>;
  return C(U(U(a) * U(b)));
}
template <typename C>
STRATA_HOST_DEVICE STRATA_INLINE C wrap_neg(C a) {
  return wrap_sub(C(0), a);
}
// |a|, wrapping (abs of the lowest signed value is itself); the identity on unsigned types.
template <typename C>
STRATA_HOST_DEVICE STRATA_INLINE C wrap_abs(C a) {
  if constexpr (std::is_signed_v<C>) {
    return a < C(0) ? wrap_neg(a) : a;
  } else {
    return a;
  }
}

// Python-style floor division and modulo on integers; x / 0 and x % 0 give 0.
template <typename C>
STRATA_HOST_DEVICE STRATA_INLINE C int_floordiv(C a, C b) {
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
STRATA_HOST_DEVICE STRATA_INLINE C int_floormod(C a, C b) {
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
STRATA_HOST_DEVICE STRATA_INLINE C int_pow(C base, C exponent) {
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

// ---- floating point ----------------------------------------------------------------------

// fmod in the compute type itself (fmodf for float), never through the other precision. fmod
// is exact, so every implementation of it gives the same bits.
STRATA_HOST_DEVICE STRATA_INLINE float fmod_of(float a, float b) { return fmodf(a, b); }
STRATA_HOST_DEVICE STRATA_INLINE double fmod_of(double a, double b) { return fmod(a, b); }

// Python's modulo on floats: the result takes the divisor's sign.
template <typename C>
STRATA_HOST_DEVICE STRATA_INLINE C float_floormod(C a, C b) {
  C r = fmod_of(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

// numpy.maximum / numpy.minimum: a NaN in either operand gives NaN (x's when both are NaN).
template <typename C>
STRATA_HOST_DEVICE STRATA_INLINE C maximum_nan(C x, C y) {
  return (x > y || x != x) ? x : y;
}
template <typename C>
STRATA_HOST_DEVICE STRATA_INLINE C minimum_nan(C x, C y) {
  return (x < y || x != x) ? x : y;
}

// relu(x + y), NaN propagating as relu(NaN) does.
template <typename C>
STRATA_HOST_DEVICE STRATA_INLINE C add_relu(C x, C y) {
  const C s = x + y;
  return (s > C(0) || s != s) ? s : C(0);
}

// -1, 0 or 1 (NaN stays NaN for floats; 0 or 1 for unsigned integers).
template <typename C>
STRATA_HOST_DEVICE STRATA_INLINE C sign_of(C v) {
  if constexpr (std::is_floating_point_v<C>) {
    return v != v ? v : C((v > 0) - (v < 0));
  } else if constexpr (std::is_signed_v<C>) {
    return C((v > 0) - (v < 0));
  } else {
    return C(v > 0);
  }
}

// clip_by_value's rule: NaN passes through (both comparisons are false).
template <typename C>
STRATA_HOST_DEVICE STRATA_INLINE C clip_to(C v, C lo, C hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

// ---- conversions ---------------------------------------------------------------------------

// A float (F = float or double) to integer type To without undefined behaviour: NaN gives 0,
// values beyond To's range give its lowest or highest value.
template <typename To, typename F>
STRATA_HOST_DEVICE STRATA_INLINE To saturate_to_integer(F c) {
  if (!(c == c)) return To(0);
  if (c <= F(std::numeric_limits<To>::lowest())) return std::numeric_limits<To>::lowest();
  if (c >= F(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
  return To(c);
}

// A host double (a clip bound) to compute type C, as converting a double element would.
template <typename C>
STRATA_HOST_DEVICE STRATA_INLINE C convert_from_double(double v) {
  if constexpr (std::is_same_v<C, bool>) {
    return v != 0.0;
  } else if constexpr (std::is_floating_point_v<C>) {
    return static_cast<C>(v);
  } else {
    return saturate_to_integer<C>(v);
  }
}

}  // namespace strata::kernels_math
