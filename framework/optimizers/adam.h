// keras.optimizers.Adam, with Keras's arithmetic (bias corrections folded into the step size):
//   m = b1*m + (1-b1)*g;  v = b2*v + (1-b2)*g^2
//   alpha = lr * sqrt(1 - b2^t) / (1 - b1^t)
//   var -= alpha * m / (sqrt(v) + epsilon)      (amsgrad: vhat = max(vhat, v) replaces v)
#pragma once

#include "framework/optimizers/adam_options.h"
#include "framework/optimizers/optimizer.h"

namespace strata::optimizers {

class Adam : public Optimizer {
 public:
  explicit Adam(LearningRate learning_rate = 0.001, double beta_1 = 0.9, double beta_2 = 0.999,
                double epsilon = 1e-7, bool amsgrad = false);
  Adam(LearningRate learning_rate, const AdamOptions& options);

  const AdamHyperParameters& hyper_parameters() const { return hyper_; }
  Json get_config() const override;

 protected:
  // For AdamW, which is Adam with a different class name and default weight decay.
  Adam(const std::string& class_name, LearningRate learning_rate, const OptimizerConfig& config,
       const AdamHyperParameters& hyper);

  std::vector<std::string> slot_names() const override;
  OptimizerUpdate rule() const override;

 private:
  AdamHyperParameters hyper_;
};

}  // namespace strata::optimizers
