#include "framework/losses/loss_utils.h"

#include <sstream>

#include "framework/ops/shape_ops.h"

namespace strata::losses::detail {

void check_prediction(const char* fn, const Tensor& y_pred) {
  if (!y_pred.defined()) throw ValueError(std::string(fn) + ": y_pred is undefined");
  if (!is_floating(y_pred.dtype())) {
    throw DTypeError(std::string(fn) + ": y_pred must be a floating tensor, got dtype " +
                     dtype_name(y_pred.dtype()));
  }
}

std::pair<Tensor, Tensor> match_ranks(const Tensor& a, const Tensor& b) {
  Tensor x = a, y = b;
  if (x.rank() == y.rank() + 1 && x.dim(-1) == 1) {
    if (y.rank() == 1) y = expand_dims(y, -1);
    else x = squeeze(x, {-1});
  } else if (y.rank() == x.rank() + 1 && y.dim(-1) == 1) {
    if (x.rank() == 1) x = expand_dims(x, -1);
    else y = squeeze(y, {-1});
  }
  return {x, y};
}

std::pair<Tensor, Tensor> aligned(const char* fn, const Tensor& y_true, const Tensor& y_pred) {
  if (!y_true.defined()) throw ValueError(std::string(fn) + ": y_true is undefined");
  auto [t, p] = match_ranks(y_true, y_pred);
  if (t.shape() != p.shape()) {
    throw ShapeError(std::string(fn) + ": y_true has shape " + y_true.shape().to_string() +
                     ", expected the shape of y_pred, " + y_pred.shape().to_string());
  }
  if (t.dtype() != p.dtype()) t = cast(t, p.dtype());
  return {t, p};
}

void check_label_smoothing(const char* fn, double label_smoothing) {
  if (!(label_smoothing >= 0.0 && label_smoothing <= 1.0)) {
    std::ostringstream os;
    os << fn << ": label_smoothing must be in [0, 1], got " << label_smoothing;
    throw ValueError(os.str());
  }
}

}  // namespace strata::losses::detail
