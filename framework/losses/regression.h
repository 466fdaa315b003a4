// Regression losses (keras.losses): per-sample functions (the mean over the last axis, so
// [N, D] -> [N]) and loss objects. y_true may be [N] against [N, 1] predictions (or the reverse):
// ranks are matched as Keras does; any other shape difference is a ShapeError.
#pragma once

#include <string>

#include "framework/losses/loss.h"

namespace strata::losses {

// mean(square(y_pred - y_true), axis=-1)
Tensor mean_squared_error(const Tensor& y_true, const Tensor& y_pred);
// mean(abs(y_pred - y_true), axis=-1)
Tensor mean_absolute_error(const Tensor& y_true, const Tensor& y_pred);
// mean over the last axis of 0.5*e^2 where |e| <= delta, else delta*|e| - 0.5*delta^2.
Tensor huber(const Tensor& y_true, const Tensor& y_pred, double delta = 1.0);

// Keras's short aliases.
inline Tensor mse(const Tensor& y_true, const Tensor& y_pred) {
  return mean_squared_error(y_true, y_pred);
}
inline Tensor mae(const Tensor& y_true, const Tensor& y_pred) {
  return mean_absolute_error(y_true, y_pred);
}

class MeanSquaredError : public Loss {
 public:
  explicit MeanSquaredError(Reduction reduction = Reduction::kSumOverBatchSize,
                            std::string name = "mean_squared_error");
  Tensor call(const Tensor& y_true, const Tensor& y_pred) const override;
  std::string class_name() const override { return "MeanSquaredError"; }
};

class MeanAbsoluteError : public Loss {
 public:
  explicit MeanAbsoluteError(Reduction reduction = Reduction::kSumOverBatchSize,
                             std::string name = "mean_absolute_error");
  Tensor call(const Tensor& y_true, const Tensor& y_pred) const override;
  std::string class_name() const override { return "MeanAbsoluteError"; }
};

class Huber : public Loss {
 public:
  explicit Huber(double delta = 1.0, Reduction reduction = Reduction::kSumOverBatchSize,
                 std::string name = "huber_loss");
  Tensor call(const Tensor& y_true, const Tensor& y_pred) const override;
  std::string class_name() const override { return "Huber"; }
  Json get_config() const override;
  double delta() const { return delta_; }

 private:
  double delta_;
};

}  // namespace strata::losses
