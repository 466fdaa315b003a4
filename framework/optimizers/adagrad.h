// keras.optimizers.Adagrad (Keras 3 arithmetic):
//   accumulator += g^2;  var -= lr * g / sqrt(accumulator + epsilon)
// The accumulator starts at initial_accumulator_value (0.1), which keeps early steps bounded.
#pragma once

#include "framework/optimizers/optimizer.h"

namespace strata::optimizers {

class AdagradOptions : public OptimizerOptions<AdagradOptions> {
 public:
  AdagradOptions& initial_accumulator_value(double value) { initial_ = value; return *this; }
  AdagradOptions& epsilon(double value) { epsilon_ = value; return *this; }

 private:
  friend class Adagrad;
  double initial_ = 0.1;
  double epsilon_ = 1e-7;
};

class Adagrad : public Optimizer {
 public:
  explicit Adagrad(LearningRate learning_rate = 0.001, double initial_accumulator_value = 0.1,
                   double epsilon = 1e-7);
  Adagrad(LearningRate learning_rate, const AdagradOptions& options);

  double initial_accumulator_value() const { return initial_; }
  double epsilon() const { return epsilon_; }
  Json get_config() const override;

 protected:
  std::vector<std::string> slot_names() const override { return {"accumulator"}; }
  double slot_initial_value() const override { return initial_; }
  OptimizerUpdate rule() const override;

 private:
  double initial_, epsilon_;
};

}  // namespace strata::optimizers
