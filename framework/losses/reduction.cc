#include "framework/losses/reduction.h"

#include "framework/losses/loss_utils.h"
#include "framework/ops/creation.h"
#include "framework/ops/math_ops.h"
#include "framework/ops/shape_ops.h"

namespace strata::losses {

Reduction reduction_from_name(const std::string& name) {
  // "auto": what Keras 2 writes in saved configs (sum over batch size outside a strategy).
  if (name == "sum_over_batch_size" || name == "mean" || name == "auto") {
    return Reduction::kSumOverBatchSize;
  }
  if (name == "sum") return Reduction::kSum;
  if (name == "none") return Reduction::kNone;
  if (name == "mean_with_sample_weight") return Reduction::kMeanWithSampleWeight;
  throw ValueError("Loss: invalid reduction '" + name +
                   "'; expected one of sum_over_batch_size, sum, none, mean, auto, "
                   "mean_with_sample_weight");
}

const char* reduction_name(Reduction reduction) {
  switch (reduction) {
    case Reduction::kSumOverBatchSize: return "sum_over_batch_size";
    case Reduction::kSum: return "sum";
    case Reduction::kNone: return "none";
    case Reduction::kMeanWithSampleWeight: return "mean_with_sample_weight";
  }
  return "sum_over_batch_size";
}

Tensor reduce_weighted_values(const Tensor& values, const Tensor& sample_weight,
                              Reduction reduction) {
  Tensor weighted = values;
  Tensor weights;
  if (sample_weight.defined()) {
    weights = sample_weight.dtype() == values.dtype() ? sample_weight
                                                      : cast(sample_weight, values.dtype());
    auto [v, w] = detail::match_ranks(values, weights);
    // Only broadcasting of the weights is allowed: the losses keep their shape.
    if (broadcast_shapes(v.shape(), w.shape(), "Loss: sample_weight") != v.shape()) {
      throw ShapeError("Loss: sample_weight of shape " + sample_weight.shape().to_string() +
                       " does not broadcast to the losses' shape " + values.shape().to_string());
    }
    weighted = v * w;
    weights = w;
  }
  if (reduction == Reduction::kNone || weighted.rank() == 0) return weighted;
  const Tensor total = reduce_sum(weighted);
  if (reduction == Reduction::kSum) return total;

  // divide_no_nan, as Keras: an empty batch (or all-zero weights) gives 0 rather than NaN.
  double divisor = double(weighted.numel());
  if (reduction == Reduction::kMeanWithSampleWeight && weights.defined()) {
    divisor = reduce_sum(broadcast_to(weights, weighted.shape())).item<double>();
  }
  if (divisor == 0.0) return zeros_like(total);
  return total / divisor;
}

}  // namespace strata::losses
