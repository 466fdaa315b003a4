// Internal: the logistic function and softplus, one copy for the CPU and CUDA backends.
//
// Both must keep the small values far out on the flat side (softplus(-20) = 2.06e-9, as
// TensorFlow computes it; oneDNN 2.6's soft_relu gave -1.9e-6) and must not overflow: exp()
// passes float's range beyond log(FLT_MAX), where softplus is the identity and the logistic 0
// (oneDNN's bounds). The CPU's activation loops (cpu_dnnl_eltwise.cc) and the CUDA activation
// kernels (cuda_activation.cu: also for double, and for 16-bit types computed in float) call
// these.
#pragma once

#include <cmath>

#include "framework/kernels_math/host_device.h"

namespace strata::kernels_math {

// log(largest finite value): exp() of more overflows.
template <typename A>
STRATA_HOST_DEVICE STRATA_INLINE constexpr A exp_overflow() {
  if constexpr (sizeof(A) == sizeof(float)) {
    return A(88.72283172607421875f);
  } else {
    return A(709.78271289338399673222338991671);
  }
}

// exp and log1p in the precision of A (float or double), on the host and the device.
template <typename A>
STRATA_HOST_DEVICE STRATA_INLINE A exp_of(A v) {
  if constexpr (sizeof(A) == sizeof(float)) return ::expf(v); else return ::exp(v);
}
template <typename A>
STRATA_HOST_DEVICE STRATA_INLINE A log1p_of(A v) {
  if constexpr (sizeof(A) == sizeof(float)) return ::log1pf(v); else return ::log1p(v);
}

// 1 / (1 + exp(-v)), 0 once exp(-v) would overflow instead of dividing by infinity.
template <typename A>
STRATA_HOST_DEVICE STRATA_INLINE A logistic(A v) {
  const A minus = -v;
  return minus < exp_overflow<A>() ? A(1) / (A(1) + exp_of(minus)) : A(0);
}

// log(1 + exp(v)): exact for small results (log1p), the identity once exp(v) would overflow.
template <typename A>
STRATA_HOST_DEVICE STRATA_INLINE A softplus(A v) {
  return v < exp_overflow<A>() ? log1p_of(exp_of(v)) : v;
}

}  // namespace strata::kernels_math
