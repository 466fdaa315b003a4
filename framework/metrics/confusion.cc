#include "framework/metrics/confusion.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "framework/autograd/grad_mode.h"
#include "framework/losses/loss_utils.h"
#include "framework/ops/creation.h"
#include "framework/ops/math_ops.h"
#include "framework/ops/shape_ops.h"

namespace strata::metrics {
namespace {

constexpr double kEpsilon = 1e-7;  // Keras' backend.epsilon(), pads AUC's end thresholds

std::vector<double> checked_thresholds(const std::string& who, std::vector<double> thresholds) {
  for (double t : thresholds) {
    if (!(t >= 0.0 && t <= 1.0)) {
      std::ostringstream os;
      os << who << ": thresholds must be in [0, 1], got " << t;
      throw ValueError(os.str());
    }
  }
  return thresholds;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string auc_who(const std::string& name) { return "AUC '" + name + "'"; }

std::string checked_curve(const std::string& name, const std::string& curve) {
  const std::string c = lower(curve);
  if (c == "roc") return "ROC";
  if (c == "pr") return "PR";
  throw ValueError(auc_who(name) + ": curve must be \"ROC\" or \"PR\", got \"" + curve + "\"");
}

std::string checked_summation(const std::string& name, const std::string& method) {
  const std::string m = lower(method);
  if (m == "interpolation" || m == "minoring" || m == "majoring") return m;
  throw ValueError(auc_who(name) +
                   ": summation_method must be \"interpolation\", \"minoring\" or \"majoring\", "
                   "got \"" + method + "\"");
}

// Keras' evenly spaced thresholds, validated together with the other arguments so that nothing
// is created for a bad AUC.
std::vector<double> auc_thresholds(int num_thresholds, const std::string& curve,
                                   const std::string& method, const std::string& name) {
  checked_curve(name, curve);
  checked_summation(name, method);
  if (num_thresholds <= 1) {
    throw ValueError(auc_who(name) + ": num_thresholds must be > 1, got " +
                     std::to_string(num_thresholds));
  }
  std::vector<double> t{0.0 - kEpsilon};
  for (int i = 0; i < num_thresholds - 2; ++i) t.push_back(double(i + 1) / (num_thresholds - 1));
  t.push_back(1.0 + kEpsilon);
  return t;
}

// x[:n-1] and x[1:] of a rank-1 tensor of length n.
Tensor head(const Tensor& x) { return slice(x, {0}, {x.dim(0) - 1}); }
Tensor tail(const Tensor& x) { return slice(x, {1}, {-1}); }

// A rank-1 result of length one reads as a scalar, as Keras does with a single threshold.
Tensor squeeze_single(const Tensor& x) { return x.numel() == 1 ? reshape(x, Shape{}) : x; }

}  // namespace

ConfusionMetric::ConfusionMetric(const char* kind, std::string name,
                                 std::vector<double> thresholds, bool tp, bool fp, bool tn,
                                 bool fn, DType dtype)
    : Metric(std::move(name), dtype) {
  set_kind(kind);
  // Precision/Recall check their thresholds are in [0, 1]; AUC's padded ends lie outside.
  if (thresholds.empty()) throw ValueError(who() + ": thresholds must not be empty");
  thresholds_ = std::move(thresholds);
  const Shape shape{int64_t(thresholds_.size())};
  if (tp) true_positives_ = add_variable("true_positives", shape);
  if (fp) false_positives_ = add_variable("false_positives", shape);
  if (tn) true_negatives_ = add_variable("true_negatives", shape);
  if (fn) false_negatives_ = add_variable("false_negatives", shape);
  // Made once on the variables' device: no host-to-device copy per step.
  threshold_column_ = cast(Tensor::from_vector(thresholds_, Shape{shape[0], 1}), dtype).to(device());
}

void ConfusionMetric::update_state(const Tensor& y_true, const Tensor& y_pred,
                                   const Tensor& sample_weight) {
  detail::check_batch(who(), y_true, y_pred);
  if (!is_floating(y_pred.dtype())) {
    throw DTypeError(who() + ": y_pred must be floating, got dtype " + dtype_name(y_pred.dtype()));
  }
  const auto [t, p] = losses::detail::match_ranks(y_true, y_pred);
  if (t.shape() != p.shape()) {
    throw ShapeError(who() + ": y_true has shape " + y_true.shape().to_string() +
                     ", expected the shape of y_pred, " + y_pred.shape().to_string());
  }
  NoGradGuard no_grad;
  const Tensor pred = to_state(p);
  const int64_t m = pred.numel();
  // [T, M] decisions: every threshold against every prediction.
  const Tensor pred_pos = greater(reshape(pred, {1, m}), threshold_column_);
  const Tensor pred_neg = logical_not(pred_pos);
  const Tensor label_pos = reshape(not_equal(to_state(t), zeros(Shape{}, dtype(), device())), {1, m});
  const Tensor label_neg = logical_not(label_pos);
  Tensor weights;  // [1, M]
  if (sample_weight.defined()) {
    weights = reshape(detail::broadcast_weights(who(), to_state(sample_weight), pred), {1, m});
  }
  auto count = [&](const Tensor& pred_mask, const Tensor& label_mask) {
    Tensor hits = cast(logical_and(pred_mask, label_mask), dtype());
    if (weights.defined()) hits = hits * weights;
    return reduce_sum(hits, {1});
  };
  if (true_positives_) true_positives_->assign_add(count(pred_pos, label_pos));
  if (false_positives_) false_positives_->assign_add(count(pred_pos, label_neg));
  if (true_negatives_) true_negatives_->assign_add(count(pred_neg, label_neg));
  if (false_negatives_) false_negatives_->assign_add(count(pred_neg, label_pos));
}

Precision::Precision(std::vector<double> thresholds, std::string name, DType dtype)
    : ConfusionMetric("Precision", name,
                      checked_thresholds("Precision '" + name + "'", std::move(thresholds)), true, true, false,
                      false, dtype) {}

Tensor Precision::result() const {
  const Tensor tp = true_positives_->value();
  return squeeze_single(divide_no_nan(tp, tp + false_positives_->value()));
}

Recall::Recall(std::vector<double> thresholds, std::string name, DType dtype)
    : ConfusionMetric("Recall", name,
                      checked_thresholds("Recall '" + name + "'", std::move(thresholds)), true, false, false, true,
                      dtype) {}

Tensor Recall::result() const {
  const Tensor tp = true_positives_->value();
  return squeeze_single(divide_no_nan(tp, tp + false_negatives_->value()));
}

AUC::AUC(int num_thresholds, std::string curve, std::string summation_method, std::string name,
         DType dtype)
    : ConfusionMetric("AUC", name, auc_thresholds(num_thresholds, curve, summation_method, name),
                      true, true, true, true, dtype),
      curve_(checked_curve(name, curve)),
      summation_(checked_summation(name, summation_method)) {}

Tensor AUC::result() const {
  if (curve_ == "PR" && summation_ == "interpolation") return interpolate_pr_auc();
  const Tensor tp = true_positives_->value(), fp = false_positives_->value();
  const Tensor tn = true_negatives_->value(), fn = false_negatives_->value();
  const Tensor recall = divide_no_nan(tp, tp + fn);
  Tensor x, y;
  if (curve_ == "ROC") {
    x = divide_no_nan(fp, fp + tn);  // false-positive rate
    y = recall;
  } else {
    x = recall;
    y = divide_no_nan(tp, tp + fp);  // precision
  }
  Tensor heights;
  if (summation_ == "interpolation") heights = (head(y) + tail(y)) * 0.5;
  else if (summation_ == "minoring") heights = minimum(head(y), tail(y));
  else heights = maximum(head(y), tail(y));
  // Thresholds rise, so x falls: each bucket's width is x[i] - x[i+1] >= 0.
  return reduce_sum((head(x) - tail(x)) * heights);
}

// Davis & Goadrich (2006) interpolation of the PR curve between thresholds, Keras'
// interpolate_pr_auc: within a bucket precision follows tp as a linear function of the number
// of predicted positives p, integrated in closed form.
Tensor AUC::interpolate_pr_auc() const {
  const Tensor tp = true_positives_->value();
  const Tensor fn = false_negatives_->value();
  const Tensor zero = zeros(Shape{}, dtype(), device());
  const Tensor p = tp + false_positives_->value();
  const Tensor dtp = head(tp) - tail(tp);
  const Tensor dp = head(p) - tail(p);
  const Tensor prec_slope = divide_no_nan(dtp, maximum(dp, zero));
  const Tensor intercept = tail(tp) - prec_slope * tail(p);
  const Tensor both_positive = logical_and(greater(head(p), zero), greater(tail(p), zero));
  const Tensor safe_p_ratio = where(both_positive, divide_no_nan(head(p), maximum(tail(p), zero)),
                                    ones_like(tail(p)));
  const Tensor increment = divide_no_nan(prec_slope * (dtp + intercept * log(safe_p_ratio)),
                                         maximum(tail(tp) + tail(fn), zero));
  return reduce_sum(increment);
}

}  // namespace strata::metrics
