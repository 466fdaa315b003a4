// Helpers for the layer tests: config round trips through the registry, and finite-difference
// checks of the gradients of a layer's own variables through its real call().
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <strata/strata.h>

#include "layers/layer_registry.h"
#include "support/gradient_check.h"

namespace strata::testing {

// A float32 tensor's values, for EXPECT_EQ against literals.
inline std::vector<float> floats(const Tensor& t) { return t.to_vector<float>(); }

// float32 settings for layer gradient checks.
inline constexpr GradCheckOptions kLayerGrad{.epsilon = 1e-2, .rtol = 2e-2, .atol = 2e-3};

// layer -> {"class_name", "config"} -> registry -> layer: same class and an equal config.
inline std::shared_ptr<Layer> expect_config_round_trip(const Layer& layer) {
  const Json saved = layer_to_json(layer);
  const Json reparsed = Json::parse(saved.dump());  // through text, as model.to_json would
  std::shared_ptr<Layer> copy = layer_from_config(reparsed);
  EXPECT_EQ(copy->class_name(), layer.class_name());
  EXPECT_EQ(copy->get_config(), layer.get_config())
      << copy->get_config().dump() << "\nvs\n" << layer.get_config().dump();
  return copy;
}

// Compares the tape's gradients of sum(call() * w) w.r.t. `vars` (the layer's variables, read
// inside call()) with central differences taken by perturbing each variable with assign().
inline void expect_variable_gradients_match(const std::string& name,
                                            const std::function<Tensor()>& call,
                                            const std::vector<VariablePtr>& vars,
                                            GradCheckOptions o = kLayerGrad) {
  Tensor w;
  std::vector<Tensor> analytic;
  {
    GradientTape tape;
    const Tensor y = call();
    w = random_uniform(y.shape(), 0.5, 1.5, y.dtype(), /*seed=*/99);
    analytic = tape.gradient(reduce_sum(y * w), vars, Tensor(), UnconnectedGradients::kZero);
  }
  auto loss = [&] {
    NoGradGuard no_grad;
    return reduce_sum(call() * w).item<float>();
  };
  for (size_t k = 0; k < vars.size(); ++k) {
    ASSERT_TRUE(analytic[k].defined()) << name << ": no gradient for " << vars[k]->name();
    ASSERT_EQ(analytic[k].shape(), vars[k]->shape()) << name << ": " << vars[k]->name();
    const Tensor original = vars[k]->read_value();
    const std::vector<float> base = original.to_vector<float>();
    const std::vector<float> grad = analytic[k].to_vector<float>();
    int failures = 0;
    for (size_t i = 0; i < base.size() && failures < 5; ++i) {
      std::vector<float> v = base;
      v[i] = base[i] + float(o.epsilon);
      vars[k]->assign(Tensor::from_vector(v, original.shape()));
      const double up = loss();
      v[i] = base[i] - float(o.epsilon);
      vars[k]->assign(Tensor::from_vector(v, original.shape()));
      const double down = loss();
      vars[k]->assign(original);
      const double numeric = (up - down) / (2 * o.epsilon);
      if (!(std::fabs(grad[i] - numeric) <= o.atol + o.rtol * std::fabs(numeric))) {
        ++failures;
        ADD_FAILURE() << name << ": d/d " << vars[k]->name() << " element " << i << ": autograd "
                      << grad[i] << " vs finite difference " << numeric;
      }
    }
  }
}

}  // namespace strata::testing
