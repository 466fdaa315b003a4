// Helpers for the optimizer tests: float32 variables made through create_variable, and running
// a fixed sequence of gradients through an optimizer.
#pragma once

#include <string>
#include <vector>

#include <strata/strata.h>

namespace strata::testing {

inline VariablePtr make_var(const std::string& name, const std::vector<float>& values,
                            Shape shape = Shape{}) {
  if (shape.rank() == 0 && values.size() != 1) shape = Shape{int64_t(values.size())};
  VariableSpec spec;
  spec.name = name;
  spec.shape = shape;
  spec.initial_value = Tensor::from_vector(values, shape);
  return create_variable(spec);
}

inline Tensor grad_of(const std::vector<float>& values, const Shape& shape) {
  return Tensor::from_vector(values, shape);
}

// Applies one gradient per step to a single variable; returns its values after each step.
inline std::vector<std::vector<float>> run_steps(optimizers::Optimizer& opt, const VariablePtr& var,
                                                 const std::vector<std::vector<float>>& grads) {
  std::vector<std::vector<float>> out;
  for (const auto& g : grads) {
    opt.apply_gradients({grad_of(g, var->shape())}, {var});
    out.push_back(var->value().to_vector<float>());
  }
  return out;
}

}  // namespace strata::testing
