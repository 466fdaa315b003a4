#include "framework/losses/loss.h"

#include "framework/ops/shape_ops.h"

namespace strata::losses {
namespace {
// 16-bit predictions and targets (a mixed-precision model's outputs) are taken to float32 first,
// as Keras' Loss converts them to its float32 dtype: the logs, exps and sums of a loss lose too
// much in 16 bits, and the loss is what the gradients start from. Other dtypes are kept.
Tensor in_float32_if_16bit(const Tensor& t) {
  if (t.defined() && (t.dtype() == DType::kFloat16 || t.dtype() == DType::kBFloat16)) {
    return cast(t, DType::kFloat32);
  }
  return t;
}
}  // namespace

Tensor Loss::operator()(const Tensor& y_true, const Tensor& y_pred,
                        const Tensor& sample_weight) const {
  return reduce_weighted_values(call(in_float32_if_16bit(y_true), in_float32_if_16bit(y_pred)),
                                sample_weight, reduction_);
}

}  // namespace strata::losses
