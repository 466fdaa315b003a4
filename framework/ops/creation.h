// Creating tensors: constants, ranges and seeded random numbers.
#pragma once

#include <cstdint>

#include "framework/core/device_scope.h"
#include "framework/core/tensor.h"

namespace strata {

Tensor zeros(const Shape& shape, DType dtype = float32, Device device = default_device());
Tensor ones(const Shape& shape, DType dtype = float32, Device device = default_device());
Tensor full(const Shape& shape, double value, DType dtype = float32, Device device = default_device());
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);
Tensor full_like(const Tensor& t, double value);
// [start, start+step, ...) below `limit`, like numpy.arange; dtype int64 or float32/64.
Tensor arange(double start, double limit, double step = 1.0, DType dtype = int64,
              Device device = default_device());
Tensor arange(int64_t limit);

// Random numbers from a counter-based generator (Philox-4x32-10): the same seed gives the same
// numbers on any thread count. Without a seed, the global generator is used (see random.h).
Tensor random_uniform(const Shape& shape, double minval = 0.0, double maxval = 1.0,
                      DType dtype = float32, int64_t seed = -1, Device device = default_device());
Tensor random_normal(const Shape& shape, double mean = 0.0, double stddev = 1.0,
                     DType dtype = float32, int64_t seed = -1, Device device = default_device());
// Normal, re-drawn until within two standard deviations of the mean (TensorFlow's rule).
Tensor truncated_normal(const Shape& shape, double mean = 0.0, double stddev = 1.0,
                        DType dtype = float32, int64_t seed = -1, Device device = default_device());

}  // namespace strata
