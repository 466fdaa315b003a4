#include "framework/variables/initializers.h"

#include <cmath>
#include <map>

#include "framework/ops/creation.h"
#include "framework/ops/math_ops.h"

namespace strata::initializers {

Fans compute_fans(const Shape& shape) {
  if (shape.rank() == 0) return {1, 1};
  if (shape.rank() == 1) return {double(shape[0]), double(shape[0])};
  if (shape.rank() == 2) return {double(shape[0]), double(shape[1])};
  double receptive = 1;
  for (int i = 0; i < shape.rank() - 2; ++i) receptive *= double(shape[i]);
  return {double(shape[shape.rank() - 2]) * receptive, double(shape[shape.rank() - 1]) * receptive};
}

InitializerFn zeros() {
  return [](const Shape& s, DType d) { return strata::zeros(s, d); };
}
InitializerFn ones() {
  return [](const Shape& s, DType d) { return strata::ones(s, d); };
}
InitializerFn constant(double value) {
  return [value](const Shape& s, DType d) { return strata::full(s, value, d); };
}
InitializerFn random_uniform(double minval, double maxval, int64_t seed) {
  return [=](const Shape& s, DType d) { return strata::random_uniform(s, minval, maxval, d, seed); };
}
InitializerFn random_normal(double mean, double stddev, int64_t seed) {
  return [=](const Shape& s, DType d) { return strata::random_normal(s, mean, stddev, d, seed); };
}
InitializerFn truncated_normal(double mean, double stddev, int64_t seed) {
  return [=](const Shape& s, DType d) { return strata::truncated_normal(s, mean, stddev, d, seed); };
}

InitializerFn variance_scaling(double scale, const std::string& mode,
                               const std::string& distribution, int64_t seed) {
  if (!(scale > 0)) throw ValueError("variance_scaling: scale must be > 0, got " + std::to_string(scale));
  if (mode != "fan_in" && mode != "fan_out" && mode != "fan_avg") {
    throw ValueError("variance_scaling: mode must be fan_in, fan_out or fan_avg, got '" + mode + "'");
  }
  if (distribution != "truncated_normal" && distribution != "untruncated_normal" &&
      distribution != "uniform" && distribution != "normal") {
    throw ValueError("variance_scaling: distribution must be truncated_normal, untruncated_normal "
                     "or uniform, got '" + distribution + "'");
  }
  return [=](const Shape& s, DType d) {
    const Fans f = compute_fans(s);
    const double n = mode == "fan_in" ? f.fan_in : mode == "fan_out" ? f.fan_out
                                                                      : (f.fan_in + f.fan_out) / 2;
    const double variance = scale / std::max(1.0, n);
    if (distribution == "uniform") {
      const double limit = std::sqrt(3.0 * variance);
      return strata::random_uniform(s, -limit, limit, d, seed);
    }
    if (distribution == "untruncated_normal") {
      return strata::random_normal(s, 0.0, std::sqrt(variance), d, seed);
    }
    // Keras: stddev of a standard normal truncated to [-2, 2] is 0.8796...; undo that shrink.
    return strata::truncated_normal(s, 0.0, std::sqrt(variance) / 0.87962566103423978, d, seed);
  };
}

InitializerFn glorot_uniform(int64_t seed) { return variance_scaling(1.0, "fan_avg", "uniform", seed); }
InitializerFn glorot_normal(int64_t seed) { return variance_scaling(1.0, "fan_avg", "truncated_normal", seed); }
InitializerFn he_normal(int64_t seed) { return variance_scaling(2.0, "fan_in", "truncated_normal", seed); }
InitializerFn he_uniform(int64_t seed) { return variance_scaling(2.0, "fan_in", "uniform", seed); }
InitializerFn lecun_normal(int64_t seed) { return variance_scaling(1.0, "fan_in", "truncated_normal", seed); }
InitializerFn lecun_uniform(int64_t seed) { return variance_scaling(1.0, "fan_in", "uniform", seed); }

InitializerFn get(const std::string& name) {
  static const std::map<std::string, InitializerFn (*)()> by_name = {
      {"zeros", [] { return zeros(); }},
      {"ones", [] { return ones(); }},
      {"random_uniform", [] { return random_uniform(); }},
      {"random_normal", [] { return random_normal(); }},
      {"truncated_normal", [] { return truncated_normal(); }},
      {"glorot_uniform", [] { return glorot_uniform(); }},
      {"glorot_normal", [] { return glorot_normal(); }},
      {"he_normal", [] { return he_normal(); }},
      {"he_uniform", [] { return he_uniform(); }},
      {"lecun_normal", [] { return lecun_normal(); }},
      {"lecun_uniform", [] { return lecun_uniform(); }},
      {"variance_scaling", [] { return variance_scaling(); }},
  };
  auto it = by_name.find(name);
  if (it == by_name.end()) {
    std::string names;
    for (const auto& [k, v] : by_name) names += (names.empty() ? "" : ", ") + k;
    throw ValueError("initializers.get: unknown initializer '" + name + "'; valid names: " + names);
  }
  return it->second();
}

}  // namespace strata::initializers
