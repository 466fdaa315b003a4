// Seeded CPU inputs of any dtype for the GPU-vs-CPU tests in tests/cuda/: the same values on
// every run, built on the host so that making them needs no GPU kernel.
#pragma once

#include <cstdint>
#include <vector>

#include <strata/strata.h>

namespace strata::testing {

// Uniform values in [lo, hi), drawn in float64 and cast to `dtype` (integers truncate toward
// zero, so keep lo >= 0 for uint8); for bool, whether the draw is in the upper half.
inline Tensor random_input(const Shape& shape, DType dtype, int64_t seed, double lo = -2.0,
                           double hi = 2.0) {
  const Tensor x = random_uniform(shape, lo, hi, float64, seed, Device::cpu());
  if (dtype == DType::kBool) {
    return greater_equal(x, full(Shape{}, (lo + hi) / 2, float64, Device::cpu()));
  }
  return x.cast(dtype);
}

// Indices in [0, n) of an index dtype (int32 or int64; repeats are likely).
inline Tensor random_indices(const Shape& shape, int64_t n, DType dtype, int64_t seed) {
  return floor(random_uniform(shape, 0.0, double(n), float64, seed, Device::cpu())).cast(dtype);
}

// The floating dtypes every floating kernel is checked in.
inline const std::vector<DType>& floating_dtypes() {
  static const std::vector<DType> dtypes = {float32, float64, float16, bfloat16};
  return dtypes;
}

}  // namespace strata::testing
