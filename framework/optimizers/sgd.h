// keras.optimizers.SGD: gradient descent, optionally with (Nesterov) momentum.
//   no momentum:  var -= lr * g
//   momentum:     v = momentum * v - lr * g;  var += v
//   nesterov:     v = momentum * v - lr * g;  var += momentum * v - lr * g
#pragma once

#include "framework/optimizers/optimizer.h"

namespace strata::optimizers {

class SGDOptions : public OptimizerOptions<SGDOptions> {
 public:
  SGDOptions& momentum(double value) { momentum_ = value; return *this; }
  SGDOptions& nesterov(bool value) { nesterov_ = value; return *this; }

 private:
  friend class SGD;
  double momentum_ = 0.0;
  bool nesterov_ = false;
};

class SGD : public Optimizer {
 public:
  explicit SGD(LearningRate learning_rate = 0.01, double momentum = 0.0, bool nesterov = false);
  SGD(LearningRate learning_rate, const SGDOptions& options);

  double momentum() const { return momentum_; }
  bool nesterov() const { return nesterov_; }
  Json get_config() const override;

 protected:
  std::vector<std::string> slot_names() const override;
  OptimizerUpdate rule() const override;

 private:
  double momentum_;
  bool nesterov_;
};

}  // namespace strata::optimizers
