#include "framework/losses/loss.h"

namespace strata::losses {

Tensor Loss::operator()(const Tensor& y_true, const Tensor& y_pred,
                        const Tensor& sample_weight) const {
  return reduce_weighted_values(call(y_true, y_pred), sample_weight, reduction_);
}

}  // namespace strata::losses
