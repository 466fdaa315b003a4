// Fill, arange and counter-based random numbers on the CPU.
#include <cmath>

#include "framework/core/random.h"
#include "framework/cpu/cpu_backend.h"
#include "framework/cpu/parallel.h"
#include "framework/kernels_math/random_draws.h"

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
      for (int64_t i = begin; i < end; ++i) {
        p[i] = from_double<T>(kernels_math::random_value(dist, offset + uint64_t(i), seed, a, b));
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
      for (int64_t i = begin; i < end; ++i) {
        p[i] = kernels_math::dropout_keeps(offset + uint64_t(i), seed, rate) ? keep : drop;
      }
    });
  });
}

}  // namespace strata
