// Internal: Philox-4x32-10, the counter-based generator behind every random draw.
//
// Number i of a draw is philox::block(offset + i, attempt, seed), so the same seed gives the same
// numbers on any thread count and any device only if the CPU backend (cpu_creation.cc), the CUDA
// backend (cuda_creation.cu) and the host-side users (dataset shuffling, image datasets,
// preprocessing layers) all run this one copy of the round and of the float conversions. The
// seed and offset bookkeeping (which counters a draw gets) is framework/core/random.h.
#pragma once

#include <cstdint>

#include "framework/kernels_math/host_device.h"

namespace strata::philox {

// One Philox-4x32-10 block: four 32-bit outputs for a 128-bit counter and a 64-bit key.
STRATA_HOST_DEVICE STRATA_INLINE void block(uint64_t counter_lo, uint64_t counter_hi,
                                            uint64_t key, uint32_t out[4]) {
  constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  uint32_t c0 = uint32_t(counter_lo), c1 = uint32_t(counter_lo >> 32);
  uint32_t c2 = uint32_t(counter_hi), c3 = uint32_t(counter_hi >> 32);
  uint32_t k0 = uint32_t(key), k1 = uint32_t(key >> 32);
  STRATA_UNROLL
  for (int round = 0; round < 10; ++round) {
    // 32 x 32 -> 64-bit products: the high word feeds the next round, the low word is kept.
    const uint64_t p0 = uint64_t(kMul0) * c0;
    const uint64_t p1 = uint64_t(kMul1) * c2;
    const uint32_t n0 = uint32_t(p1 >> 32) ^ c1 ^ k0;
    const uint32_t n1 = uint32_t(p1);
    const uint32_t n2 = uint32_t(p0 >> 32) ^ c3 ^ k1;
    const uint32_t n3 = uint32_t(p0);
    c0 = n0; c1 = n1; c2 = n2; c3 = n3;
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
  out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
}

// Uniform float in [0, 1) from 32 random bits: 24 bits times 2^-24, exact (never 1.0).
STRATA_HOST_DEVICE STRATA_INLINE float to_unit_float(uint32_t bits) {
  return float(bits >> 8) * (1.0f / 16777216.0f);
}

// Uniform double in [0, 1) from 64 random bits: 53 bits times 2^-53, exact.
STRATA_HOST_DEVICE STRATA_INLINE double to_unit_double(uint32_t hi, uint32_t lo) {
  return double((uint64_t(hi) << 21) ^ (lo >> 11)) * (1.0 / 9007199254740992.0);
}

}  // namespace strata::philox
