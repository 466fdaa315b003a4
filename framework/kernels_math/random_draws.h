// Internal: how one element of a random draw is made from Philox, one copy for both backends.
//
// Backend::random and Backend::dropout_mask must give the same numbers for the same seed on the
// CPU (cpu_creation.cc) and the GPU (cuda_creation.cu): element i uses the Philox block at
// counter (offset + i, attempt) with key = seed, the same conversion to [0, 1), the same
// Box-Muller transform and the same truncated-normal redraws, all written once here. The double
// arithmetic goes through rounded_ops.h so nvcc does not fuse it into FMAs the CPU lacks. Uniform
// numbers and dropout masks are then bit-identical; normal numbers agree to the last bit or two
// of double math only, because the device's log and cos round differently from glibc's.
#pragma once

#include <math.h>

#include <cstdint>

#include "framework/backend/kernel_params.h"
#include "framework/kernels_math/host_device.h"
#include "framework/kernels_math/philox.h"
#include "framework/kernels_math/rounded_ops.h"

namespace strata::kernels_math {

// Standard normal from one Philox block via Box-Muller (the block's first two words give u1,
// the last two u2).
STRATA_HOST_DEVICE STRATA_INLINE double normal_from_block(const uint32_t r[4]) {
  constexpr double kTwoPi = 2.0 * M_PI;
  const double u1 = 1.0 - philox::to_unit_double(r[0], r[1]);  // (0, 1]: log is finite
  const double u2 = philox::to_unit_double(r[2], r[3]);
  return mul_rn(sqrt(mul_rn(-2.0, log(u1))), cos(mul_rn(kTwoPi, u2)));
}

// Element `counter` of a draw from `dist`: uniform in [a, b), or normal (truncated normal: within
// two standard deviations) with mean a and standard deviation b.
STRATA_HOST_DEVICE STRATA_INLINE double random_value(RandomDistribution dist, uint64_t counter,
                                                     uint64_t seed, double a, double b) {
  uint32_t r[4];
  if (dist == RandomDistribution::kUniform) {
    philox::block(counter, 0, seed, r);
    const double v = add_rn(a, mul_rn(b - a, philox::to_unit_double(r[0], r[1])));
    return v >= b ? a : v;  // guard the open upper bound after rounding
  }
  if (dist == RandomDistribution::kNormal) {
    philox::block(counter, 0, seed, r);
    return add_rn(a, mul_rn(b, normal_from_block(r)));
  }
  // Truncated normal: redraw (a new block per attempt) until within two stddevs.
  double z = 0;
  for (uint64_t attempt = 0; attempt < 1000; ++attempt) {
    philox::block(counter, attempt, seed, r);
    z = normal_from_block(r);
    if (fabs(z) <= 2.0) break;
  }
  if (fabs(z) > 2.0) z = 0;  // probability ~1e-1300: unreachable in practice
  return add_rn(a, mul_rn(b, z));
}

// Whether dropout keeps element `counter`: its uniform float is at least `rate`.
STRATA_HOST_DEVICE STRATA_INLINE bool dropout_keeps(uint64_t counter, uint64_t seed, float rate) {
  uint32_t r[4];
  philox::block(counter, 0, seed, r);
  return philox::to_unit_float(r[0]) >= rate;
}

}  // namespace strata::kernels_math
