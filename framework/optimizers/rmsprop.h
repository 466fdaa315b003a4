// keras.optimizers.RMSprop:
//   rms = rho*rms + (1-rho)*g^2
//   centered: mg = rho*mg + (1-rho)*g;  denominator = rms - mg^2 + epsilon
//   else:     denominator = rms + epsilon
//   increment = lr * g / sqrt(denominator)
//   momentum > 0: mom = momentum*mom + increment; var -= mom      else: var -= increment
#pragma once

#include "framework/optimizers/optimizer.h"

namespace strata::optimizers {

class RMSpropOptions : public OptimizerOptions<RMSpropOptions> {
 public:
  RMSpropOptions& rho(double value) { rho_ = value; return *this; }
  RMSpropOptions& momentum(double value) { momentum_ = value; return *this; }
  RMSpropOptions& epsilon(double value) { epsilon_ = value; return *this; }
  RMSpropOptions& centered(bool value) { centered_ = value; return *this; }

 private:
  friend class RMSprop;
  double rho_ = 0.9;
  double momentum_ = 0.0;
  double epsilon_ = 1e-7;
  bool centered_ = false;
};

class RMSprop : public Optimizer {
 public:
  explicit RMSprop(LearningRate learning_rate = 0.001, double rho = 0.9, double momentum = 0.0,
                   double epsilon = 1e-7, bool centered = false);
  RMSprop(LearningRate learning_rate, const RMSpropOptions& options);

  double rho() const { return rho_; }
  double momentum() const { return momentum_; }
  double epsilon() const { return epsilon_; }
  bool centered() const { return centered_; }
  Json get_config() const override;

 protected:
  std::vector<std::string> slot_names() const override;
  OptimizerUpdate rule() const override;

 private:
  double rho_, momentum_, epsilon_;
  bool centered_;
};

}  // namespace strata::optimizers
