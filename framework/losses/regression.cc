#include "framework/losses/regression.h"

#include <cmath>
#include <sstream>

#include "framework/losses/loss_utils.h"
#include "framework/ops/creation.h"
#include "framework/ops/math_ops.h"

namespace strata::losses {
namespace {

// The mean over the last axis, as Keras; a scalar (rank 0) stays as it is.
Tensor mean_last(const Tensor& x) { return x.rank() == 0 ? x : reduce_mean(x, {-1}); }

void check_delta(const char* fn, double delta) {
  if (!(delta >= 0.0) || !std::isfinite(delta)) {
    std::ostringstream os;
    os << fn << ": delta must be a finite number >= 0, got " << delta;
    throw ValueError(os.str());
  }
}

}  // namespace

Tensor mean_squared_error(const Tensor& y_true, const Tensor& y_pred) {
  const char* fn = "mean_squared_error";
  detail::check_prediction(fn, y_pred);
  const auto [t, p] = detail::aligned(fn, y_true, y_pred);
  return mean_last(square(p - t));
}

Tensor mean_absolute_error(const Tensor& y_true, const Tensor& y_pred) {
  const char* fn = "mean_absolute_error";
  detail::check_prediction(fn, y_pred);
  const auto [t, p] = detail::aligned(fn, y_true, y_pred);
  return mean_last(abs(p - t));
}

Tensor huber(const Tensor& y_true, const Tensor& y_pred, double delta) {
  const char* fn = "huber";
  detail::check_prediction(fn, y_pred);
  check_delta(fn, delta);
  const auto [t, p] = detail::aligned(fn, y_true, y_pred);
  const Tensor error = p - t;
  const Tensor abs_error = abs(error);
  const Tensor quadratic = 0.5 * square(error);
  const Tensor linear = delta * abs_error - 0.5 * delta * delta;
  return mean_last(where(less_equal(abs_error, full_like(abs_error, delta)), quadratic, linear));
}

MeanSquaredError::MeanSquaredError(Reduction reduction, std::string name)
    : Loss(std::move(name), reduction) {}

Tensor MeanSquaredError::call(const Tensor& y_true, const Tensor& y_pred) const {
  return mean_squared_error(y_true, y_pred);
}

MeanAbsoluteError::MeanAbsoluteError(Reduction reduction, std::string name)
    : Loss(std::move(name), reduction) {}

Tensor MeanAbsoluteError::call(const Tensor& y_true, const Tensor& y_pred) const {
  return mean_absolute_error(y_true, y_pred);
}

Huber::Huber(double delta, Reduction reduction, std::string name)
    : Loss(std::move(name), reduction), delta_(delta) {
  check_delta("Huber", delta);
}

Tensor Huber::call(const Tensor& y_true, const Tensor& y_pred) const {
  return huber(y_true, y_pred, delta_);
}

}  // namespace strata::losses
