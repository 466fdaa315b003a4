#include "framework/ops/creation.h"

#include <cmath>

#include "framework/backend/backend.h"
#include "framework/core/random.h"

namespace strata {

Tensor full(const Shape& shape, double value, DType dtype, Device device) {
  Tensor t = Tensor::empty(shape, dtype, device);
  backend_for(device).fill(t, value);
  return t;
}
Tensor zeros(const Shape& shape, DType dtype, Device device) { return full(shape, 0.0, dtype, device); }
Tensor ones(const Shape& shape, DType dtype, Device device) { return full(shape, 1.0, dtype, device); }
Tensor zeros_like(const Tensor& t) { return zeros(t.shape(), t.dtype(), t.device()); }
Tensor ones_like(const Tensor& t) { return ones(t.shape(), t.dtype(), t.device()); }
Tensor full_like(const Tensor& t, double value) { return full(t.shape(), value, t.dtype(), t.device()); }

Tensor arange(double start, double limit, double step, DType dtype, Device device) {
  if (step == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(step)) {
    throw ValueError("arange: start, limit and step must be finite and step non-zero; got start=" +
                     std::to_string(start) + " limit=" + std::to_string(limit) +
                     " step=" + std::to_string(step));
  }
  const double count = std::ceil((limit - start) / step);
  if (count > 1e12) throw ValueError("arange: too many elements (" + std::to_string(count) + ")");
  const int64_t n = count > 0 ? int64_t(count) : 0;
  Tensor t = Tensor::empty(Shape{n}, dtype, device);
  backend_for(device).arange(t, start, step);
  return t;
}

Tensor arange(int64_t limit) { return arange(0.0, double(limit), 1.0, int64); }

namespace {
Tensor random_tensor(const Shape& shape, RandomDistribution dist, double a, double b, DType dtype,
                     int64_t seed, Device device, const char* op) {
  if (!is_floating(dtype)) {
    throw DTypeError(std::string(op) + ": dtype must be floating, got " + dtype_name(dtype));
  }
  Tensor t = Tensor::empty(shape, dtype, device);
  // An explicit seed gives the same numbers on every call (stateless); otherwise the global
  // generator hands out fresh counters.
  GeneratorState s = seed >= 0 ? GeneratorState{uint64_t(seed), 0}
                               : reserve_random(uint64_t(t.numel()));
  backend_for(device).random(t, dist, s.seed, s.offset, a, b);
  return t;
}
}  // namespace

Tensor random_uniform(const Shape& shape, double minval, double maxval, DType dtype, int64_t seed,
                      Device device) {
  if (!(minval < maxval)) {
    throw ValueError("random_uniform: minval must be < maxval, got " + std::to_string(minval) +
                     " and " + std::to_string(maxval));
  }
  return random_tensor(shape, RandomDistribution::kUniform, minval, maxval, dtype, seed, device,
                       "random_uniform");
}

Tensor random_normal(const Shape& shape, double mean, double stddev, DType dtype, int64_t seed,
                     Device device) {
  if (!(stddev >= 0)) throw ValueError("random_normal: stddev must be >= 0, got " + std::to_string(stddev));
  return random_tensor(shape, RandomDistribution::kNormal, mean, stddev, dtype, seed, device,
                       "random_normal");
}

Tensor truncated_normal(const Shape& shape, double mean, double stddev, DType dtype, int64_t seed,
                        Device device) {
  if (!(stddev >= 0)) throw ValueError("truncated_normal: stddev must be >= 0, got " + std::to_string(stddev));
  return random_tensor(shape, RandomDistribution::kTruncatedNormal, mean, stddev, dtype, seed,
                       device, "truncated_normal");
}

}  // namespace strata
