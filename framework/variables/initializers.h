// Weight initializers with Keras' names and formulas. Each returns an InitializerFn that a
// VariableSpec (or Layer::add_weight) calls with the variable's shape and dtype.
#pragma once

#include <cstdint>
#include <string>

#include "framework/variables/variable.h"

namespace strata::initializers {

// Keras' fans: rank 2 [in, out]; rank >= 3 (conv kernels, HWIO) multiplies both by the
// receptive field (product of the leading dims); rank 1 uses the single dim for both.
struct Fans {
  double fan_in = 1, fan_out = 1;
};
Fans compute_fans(const Shape& shape);

// seed < 0 draws from the global generator (set_random_seed), so the same global seed and the
// same creation order give the same weights.
InitializerFn zeros();
InitializerFn ones();
InitializerFn constant(double value);
InitializerFn random_uniform(double minval = -0.05, double maxval = 0.05, int64_t seed = -1);
InitializerFn random_normal(double mean = 0.0, double stddev = 0.05, int64_t seed = -1);
InitializerFn truncated_normal(double mean = 0.0, double stddev = 0.05, int64_t seed = -1);
// mode: "fan_in", "fan_out", "fan_avg"; distribution: "truncated_normal", "untruncated_normal",
// "uniform" (Keras VarianceScaling).
InitializerFn variance_scaling(double scale = 1.0, const std::string& mode = "fan_in",
                               const std::string& distribution = "truncated_normal",
                               int64_t seed = -1);
InitializerFn glorot_uniform(int64_t seed = -1);
InitializerFn glorot_normal(int64_t seed = -1);
InitializerFn he_normal(int64_t seed = -1);
InitializerFn he_uniform(int64_t seed = -1);
InitializerFn lecun_normal(int64_t seed = -1);
InitializerFn lecun_uniform(int64_t seed = -1);

// By Keras name ("glorot_uniform", "he_normal", "zeros", ...); throws ValueError listing the
// valid names otherwise.
InitializerFn get(const std::string& name);

}  // namespace strata::initializers
