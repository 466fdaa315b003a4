#include "framework/losses/crossentropy.h"

#include "framework/losses/loss_utils.h"
#include "framework/ops/math_ops.h"
#include "framework/ops/nn_ops.h"
#include "framework/ops/op_checks.h"
#include "framework/ops/shape_ops.h"

namespace strata::losses {
namespace {

// Keras's backend.epsilon(): probabilities are kept in [kEpsilon, 1 - kEpsilon] before log().
constexpr double kEpsilon = 1e-7;

// Integer labels as int64, shaped like y_pred without its last axis; range-checked on the host
// (a label out of range would otherwise silently give an all-zero one-hot row).
Tensor checked_labels(const char* fn, const Tensor& y_true, const Tensor& y_pred) {
  if (!y_true.defined()) throw ValueError(std::string(fn) + ": y_true is undefined");
  if (y_true.dtype() == DType::kBool) {
    throw DTypeError(std::string(fn) + ": y_true must hold integer class labels, got dtype bool");
  }
  Tensor labels = y_true;
  if (labels.rank() == y_pred.rank() && labels.rank() > 0 && labels.dim(-1) == 1) {
    labels = squeeze(labels, {-1});
  }
  const std::vector<int64_t>& pd = y_pred.shape().dims();
  const Shape expected(std::vector<int64_t>(pd.begin(), pd.end() - 1));
  if (labels.shape() != expected) {
    throw ShapeError(std::string(fn) + ": y_true has shape " + y_true.shape().to_string() +
                     ", expected " + expected.to_string() + " (or with a trailing 1) for y_pred " +
                     "of shape " + y_pred.shape().to_string());
  }
  if (labels.dtype() != DType::kInt64) labels = cast(labels, DType::kInt64);
  const int64_t classes = y_pred.dim(-1);
  const std::vector<int64_t> values = ops_detail::index_values_to_check(labels);
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] < 0 || values[i] >= classes) {
      throw ValueError(std::string(fn) + ": label " + std::to_string(values[i]) +
                       " (y_true element " + std::to_string(i) + ") is outside [0, " +
                       std::to_string(classes) + ") for y_pred with " + std::to_string(classes) +
                       " classes");
    }
  }
  return labels;
}

void check_rank_at_least_1(const char* fn, const Tensor& y_pred) {
  if (y_pred.rank() < 1) {
    throw ShapeError(std::string(fn) + ": y_pred must have at least rank 1 (a class axis), got "
                     "shape " + y_pred.shape().to_string());
  }
}

}  // namespace

Tensor sparse_categorical_crossentropy(const Tensor& y_true, const Tensor& y_pred,
                                       bool from_logits, int axis, double label_smoothing) {
  const char* fn = "sparse_categorical_crossentropy";
  detail::check_prediction(fn, y_pred);
  detail::check_label_smoothing(fn, label_smoothing);
  check_rank_at_least_1(fn, y_pred);
  if (normalize_axis(axis, y_pred.rank(), fn) != y_pred.rank() - 1) {
    throw ValueError(std::string(fn) + ": only axis=-1 (the last axis) is supported, got axis=" +
                     std::to_string(axis));
  }
  const Tensor labels = checked_labels(fn, y_true, y_pred);
  const int64_t classes = y_pred.dim(-1);
  const double off = label_smoothing / double(classes);
  const Tensor target = one_hot(labels, classes, 1.0 - label_smoothing + off, off, y_pred.dtype());
  // Keras: probabilities are clipped, logged, and renormalised by the softmax cross-entropy.
  const Tensor logits =
      from_logits ? y_pred : log(clip_by_value(y_pred, kEpsilon, 1.0 - kEpsilon));
  return -reduce_sum(target * log_softmax(logits, -1), {-1});
}

Tensor categorical_crossentropy(const Tensor& y_true, const Tensor& y_pred, bool from_logits,
                                double label_smoothing, int axis) {
  const char* fn = "categorical_crossentropy";
  detail::check_prediction(fn, y_pred);
  detail::check_label_smoothing(fn, label_smoothing);
  check_rank_at_least_1(fn, y_pred);
  const int ax = normalize_axis(axis, y_pred.rank(), fn);
  Tensor target = y_true;
  if (!target.defined()) throw ValueError(std::string(fn) + ": y_true is undefined");
  if (target.shape() != y_pred.shape()) {
    throw ShapeError(std::string(fn) + ": y_true has shape " + y_true.shape().to_string() +
                     ", expected the shape of y_pred, " + y_pred.shape().to_string() +
                     " (for integer labels use sparse_categorical_crossentropy)");
  }
  if (target.dtype() != y_pred.dtype()) target = cast(target, y_pred.dtype());
  if (label_smoothing > 0) {
    const double classes = double(y_pred.dim(ax));
    target = target * (1.0 - label_smoothing) + label_smoothing / classes;
  }
  Tensor log_probs;
  if (from_logits) {
    log_probs = log_softmax(y_pred, ax);
  } else {
    // Keras renormalises the probabilities along the axis before clipping.
    const Tensor p = y_pred / reduce_sum(y_pred, {ax}, /*keepdims=*/true);
    log_probs = log(clip_by_value(p, kEpsilon, 1.0 - kEpsilon));
  }
  return -reduce_sum(target * log_probs, {ax});
}

Tensor binary_crossentropy(const Tensor& y_true, const Tensor& y_pred, bool from_logits,
                           double label_smoothing, int axis) {
  const char* fn = "binary_crossentropy";
  detail::check_prediction(fn, y_pred);
  detail::check_label_smoothing(fn, label_smoothing);
  auto [target, pred] = detail::aligned(fn, y_true, y_pred);
  if (label_smoothing > 0) target = target * (1.0 - label_smoothing) + 0.5 * label_smoothing;
  Tensor elementwise;
  if (from_logits) {
    // max(x, 0) - x*z + log(1 + exp(-|x|)): never exponentiates a positive number. max(x, 0) is
    // written 0.5*(x + |x|) so any floating dtype works and the gradient at x = 0 is exactly
    // sigmoid(0) - z.
    const Tensor a = abs(pred);
    elementwise = 0.5 * (pred + a) - pred * target + log1p(exp(-a));
  } else {
    const Tensor p = clip_by_value(pred, kEpsilon, 1.0 - kEpsilon);
    elementwise = -(target * log(p) + (1.0 - target) * log(1.0 - p));
  }
  if (elementwise.rank() == 0) return elementwise;
  return reduce_mean(elementwise, {normalize_axis(axis, elementwise.rank(), fn)});
}

SparseCategoricalCrossentropy::SparseCategoricalCrossentropy(bool from_logits,
                                                             Reduction reduction,
                                                             std::string name,
                                                             double label_smoothing)
    : Loss(std::move(name), reduction),
      from_logits_(from_logits),
      label_smoothing_(label_smoothing) {
  detail::check_label_smoothing("SparseCategoricalCrossentropy", label_smoothing);
}

Tensor SparseCategoricalCrossentropy::call(const Tensor& y_true, const Tensor& y_pred) const {
  return sparse_categorical_crossentropy(y_true, y_pred, from_logits_, -1, label_smoothing_);
}

CategoricalCrossentropy::CategoricalCrossentropy(bool from_logits, double label_smoothing,
                                                 int axis, Reduction reduction, std::string name)
    : Loss(std::move(name), reduction),
      from_logits_(from_logits),
      label_smoothing_(label_smoothing),
      axis_(axis) {
  detail::check_label_smoothing("CategoricalCrossentropy", label_smoothing);
}

Tensor CategoricalCrossentropy::call(const Tensor& y_true, const Tensor& y_pred) const {
  return categorical_crossentropy(y_true, y_pred, from_logits_, label_smoothing_, axis_);
}

BinaryCrossentropy::BinaryCrossentropy(bool from_logits, double label_smoothing, int axis,
                                       Reduction reduction, std::string name)
    : Loss(std::move(name), reduction),
      from_logits_(from_logits),
      label_smoothing_(label_smoothing),
      axis_(axis) {
  detail::check_label_smoothing("BinaryCrossentropy", label_smoothing);
}

Tensor BinaryCrossentropy::call(const Tensor& y_true, const Tensor& y_pred) const {
  return binary_crossentropy(y_true, y_pred, from_logits_, label_smoothing_, axis_);
}

}  // namespace strata::losses
