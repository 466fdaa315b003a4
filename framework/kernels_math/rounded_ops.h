// Internal: arithmetic that rounds after every operation, the same on the CPU and the GPU.
//
// Results that must be bit-identical on both backends (optimizer steps, random numbers) are
// computed with these instead of the operators: nvcc contracts a * b + c into one fused
// multiply-add, which rounds once where the x86-64 CPU build (no FMA in its baseline) rounds
// twice. On the device they are the correctly rounded intrinsics (__fmul_rn, __dadd_rn, ...),
// which nvcc never fuses; on the host, compiled by g++ or by nvcc's host pass, they are the plain
// operators, so the CPU backend's code is what it would be without them.
#pragma once

#include <math.h>

#include "framework/kernels_math/host_device.h"

namespace strata::kernels_math {

#if defined(__CUDA_ARCH__)
#define STRATA_ROUNDED(device_expression, host_expression) return device_expression
#else
#define STRATA_ROUNDED(device_expression, host_expression) return host_expression
#endif

STRATA_HOST_DEVICE STRATA_INLINE float mul_rn(float a, float b) {
  STRATA_ROUNDED(__fmul_rn(a, b), a * b);
}
STRATA_HOST_DEVICE STRATA_INLINE float add_rn(float a, float b) {
  STRATA_ROUNDED(__fadd_rn(a, b), a + b);
}
STRATA_HOST_DEVICE STRATA_INLINE float sub_rn(float a, float b) {
  STRATA_ROUNDED(__fsub_rn(a, b), a - b);
}
STRATA_HOST_DEVICE STRATA_INLINE float div_rn(float a, float b) {
  STRATA_ROUNDED(__fdiv_rn(a, b), a / b);
}
STRATA_HOST_DEVICE STRATA_INLINE float sqrt_rn(float a) {
  STRATA_ROUNDED(__fsqrt_rn(a), sqrtf(a));
}

STRATA_HOST_DEVICE STRATA_INLINE double mul_rn(double a, double b) {
  STRATA_ROUNDED(__dmul_rn(a, b), a * b);
}
STRATA_HOST_DEVICE STRATA_INLINE double add_rn(double a, double b) {
  STRATA_ROUNDED(__dadd_rn(a, b), a + b);
}

#undef STRATA_ROUNDED

}  // namespace strata::kernels_math
