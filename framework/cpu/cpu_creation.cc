// Fill, arange and counter-based random numbers on the CPU.
#include <cmath>

#include "framework/core/random.h"
#include "framework/kernels_math/philox.h"
#include "framework/cpu/cpu_backend.h"
#include "framework/cpu/parallel.h"

namespace strata {
namespace {

template <typename T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return T(float(v));
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != 0.0;
  } else {
    return static_cast<T>(v);
  }
}

// Standard normal from one Philox block via Box-Muller (uses the block's first two words).
double normal_from_block(const uint32_t r[4]) {
  const double u1 = 1.0 - philox::to_unit_double(r[0], r[1]);  // (0, 1]: log is finite
  const double u2 = philox::to_unit_double(r[2], r[3]);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

}  // namespace

void CpuBackend::fill(Tensor& out, double value) {
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = static_cast<T*>(out.raw_data());
    const T v = from_double<T>(value);
    cpu::parallel_for(out.numel(), cpu::kParallelGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) p[i] = v;
    });
  });
}

void CpuBackend::arange(Tensor& out, double start, double step) {
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = static_cast<T*>(out.raw_data());
    for (int64_t i = 0; i < out.numel(); ++i) p[i] = from_double<T>(start + double(i) * step);
  });
}

void CpuBackend::random(Tensor& out, RandomDistribution dist, uint64_t seed, uint64_t offset,
                        double a, double b) {
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = static_cast<T*>(out.raw_data());
    cpu::parallel_for(out.numel(), 4096, [&](int64_t begin, int64_t end) {
      uint32_t r[4];
      for (int64_t i = begin; i < end; ++i) {
        const uint64_t counter = offset + uint64_t(i);
        double v;
        if (dist == RandomDistribution::kUniform) {
          philox::block(counter, 0, seed, r);
          v = a + (b - a) * philox::to_unit_double(r[0], r[1]);
          if (v >= b) v = a;  // guard the open upper bound after rounding
        } else if (dist == RandomDistribution::kNormal) {
          philox::block(counter, 0, seed, r);
          v = a + b * normal_from_block(r);
        } else {
          // Truncated normal: redraw (a new block per attempt) until within two stddevs.
          double z = 0;
          for (uint64_t attempt = 0; attempt < 1000; ++attempt) {
            philox::block(counter, attempt, seed, r);
            z = normal_from_block(r);
            if (std::fabs(z) <= 2.0) break;
          }
          if (std::fabs(z) > 2.0) z = 0;  // probability ~1e-1300: unreachable in practice
          v = a + b * z;
        }
        p[i] = from_double<T>(v);
      }
    });
  });
}

void CpuBackend::dropout_mask(Tensor& mask, float rate, uint64_t seed, uint64_t offset) {
  const double scale = rate < 1.0f ? 1.0 / (1.0 - double(rate)) : 0.0;
  visit_dtype(mask.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = static_cast<T*>(mask.raw_data());
    const T keep = from_double<T>(scale), drop = from_double<T>(0.0);
    cpu::parallel_for(mask.numel(), 4096, [&](int64_t begin, int64_t end) {
      uint32_t r[4];
      for (int64_t i = begin; i < end; ++i) {
        philox::block(offset + uint64_t(i), 0, seed, r);
        p[i] = philox::to_unit_float(r[0]) >= rate ? keep : drop;
      }
    });
  });
}

}  // namespace strata
