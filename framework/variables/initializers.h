// Weight initializers with Keras' names, formulas and configs. An Initializer is a callable
// (shape, dtype) -> Tensor that also knows its Keras class name and config, so layers can save
// and restore it in get_config() / from_config().
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "framework/config/json.h"
#include "framework/variables/variable.h"

namespace strata {

class Initializer {
 public:
  Initializer() = default;  // empty: the layer's default applies
  Initializer(std::string class_name, Json config, InitializerFn fn);
  // Any callable: a custom initializer (saved as class "Custom", not restorable from JSON).
  Initializer(InitializerFn fn);  // NOLINT: implicit, so lambdas pass where initializers go
  template <typename F, typename = std::enable_if_t<
                            std::is_invocable_r_v<Tensor, F, const Shape&, DType> &&
                            !std::is_same_v<std::decay_t<F>, Initializer> &&
                            !std::is_same_v<std::decay_t<F>, InitializerFn>>>
  Initializer(F fn) : Initializer(InitializerFn(std::move(fn))) {}  // NOLINT

  Tensor operator()(const Shape& shape, DType dtype) const;
  explicit operator bool() const { return bool(fn_); }
  const std::string& class_name() const { return class_name_; }
  const Json& config() const { return config_; }
  // {"class_name": "GlorotUniform", "config": {"seed": null}}, as Keras serialises it.
  Json to_json() const;

 private:
  std::string class_name_;
  Json config_;
  InitializerFn fn_;
};

namespace initializers {

// Keras' fans: rank 2 [in, out]; rank >= 3 (conv kernels, HWIO) multiplies both by the
// receptive field (product of the leading dims); rank 1 uses the single dim for both.
struct Fans {
  double fan_in = 1, fan_out = 1;
};
Fans compute_fans(const Shape& shape);

// seed < 0 draws from the global generator (set_random_seed), so the same global seed and the
// same creation order give the same weights.
Initializer zeros();
Initializer ones();
Initializer constant(double value);
Initializer random_uniform(double minval = -0.05, double maxval = 0.05, int64_t seed = -1);
Initializer random_normal(double mean = 0.0, double stddev = 0.05, int64_t seed = -1);
Initializer truncated_normal(double mean = 0.0, double stddev = 0.05, int64_t seed = -1);
// mode: "fan_in", "fan_out", "fan_avg"; distribution: "truncated_normal", "untruncated_normal",
// "uniform" (Keras VarianceScaling).
Initializer variance_scaling(double scale = 1.0, const std::string& mode = "fan_in",
                             const std::string& distribution = "truncated_normal",
                             int64_t seed = -1);
Initializer glorot_uniform(int64_t seed = -1);
Initializer glorot_normal(int64_t seed = -1);
Initializer he_normal(int64_t seed = -1);
Initializer he_uniform(int64_t seed = -1);
Initializer lecun_normal(int64_t seed = -1);
Initializer lecun_uniform(int64_t seed = -1);

// By Keras name, snake_case or class name ("glorot_uniform", "GlorotUniform", "he_normal",
// "zeros", ...); throws ValueError listing the valid names otherwise.
Initializer get(const std::string& name);
// From Keras JSON: a name string or {"class_name": ..., "config": {...}}.
Initializer from_json(const Json& json);

}  // namespace initializers
}  // namespace strata
