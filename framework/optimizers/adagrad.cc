#include "framework/optimizers/adagrad.h"

namespace strata::optimizers {

Adagrad::Adagrad(LearningRate learning_rate, double initial_accumulator_value, double epsilon)
    : Adagrad(std::move(learning_rate), AdagradOptions()
                                            .initial_accumulator_value(initial_accumulator_value)
                                            .epsilon(epsilon)) {}

Adagrad::Adagrad(LearningRate learning_rate, const AdagradOptions& options)
    : Optimizer("Adagrad", std::move(learning_rate), options.config()),
      initial_(options.initial_),
      epsilon_(options.epsilon_) {
  check_non_negative("initial_accumulator_value", initial_);
  check_non_negative("epsilon", epsilon_);
}

OptimizerUpdate Adagrad::rule() const {
  OptimizerUpdate u;
  u.kind = OptimizerKind::kAdagrad;
  u.epsilon = float(epsilon_);
  return u;
}

}  // namespace strata::optimizers
