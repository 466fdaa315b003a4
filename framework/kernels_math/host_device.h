// Internal: the annotations that let one function body compile for both backends.
//
// framework/kernels_math/ holds the math the CPU backend (framework/cpu, compiled by g++) and
// the CUDA backend (framework/cuda, compiled by nvcc) must compute identically: a seed draws the
// same numbers and an optimizer step gives the same bits on either device only while both run
// the same code. So each rule is written once, here, and both backends include it. Under nvcc
// STRATA_HOST_DEVICE marks a function callable from host and device code and STRATA_INLINE
// forces it inline (as the device copies were); under g++ both expand to plain C++, so these
// headers need no CUDA header and the CPU build sees ordinary inline functions.
#pragma once

#if defined(__CUDACC__)
#define STRATA_HOST_DEVICE __host__ __device__
#define STRATA_INLINE __forceinline__
#define STRATA_UNROLL _Pragma("unroll")
#else
#define STRATA_HOST_DEVICE
#define STRATA_INLINE inline
#define STRATA_UNROLL
#endif
