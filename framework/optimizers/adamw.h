// keras.optimizers.AdamW: Adam with decoupled weight decay (Loshchilov & Hutter). As in Keras 3,
// each step first decays the variable, var -= lr * weight_decay * var, then takes the Adam step.
#pragma once

#include "framework/optimizers/adam.h"

namespace strata::optimizers {

class AdamW : public Adam {
 public:
  explicit AdamW(LearningRate learning_rate = 0.001, double weight_decay = 0.004,
                 double beta_1 = 0.9, double beta_2 = 0.999, double epsilon = 1e-7,
                 bool amsgrad = false);
  AdamW(LearningRate learning_rate, const AdamWOptions& options);

  double weight_decay() const { return *config().weight_decay; }

 protected:
  OptimizerUpdate rule() const override;
};

}  // namespace strata::optimizers
