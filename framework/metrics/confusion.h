// Confusion-matrix metrics (keras.metrics): Precision, Recall and AUC.
//
// A prediction counts as positive at threshold t when y_pred > t; a label is positive when it
// is non-zero (Keras casts labels to bool). Every element of y_pred is one decision, so [N, C]
// predictions count N*C decisions; sample weights of shape [N] or [N, 1] weigh all C of a
// sample. The counts live in [num_thresholds] variables, updated with tensor ops only.
// y_pred is expected in [0, 1] (probabilities); unlike Keras this is not asserted, because that
// would read the predictions on the host every step.
#pragma once

#include <string>
#include <vector>

#include "framework/metrics/metric.h"

namespace strata::metrics {

// Shared update of the confusion counts at a list of thresholds.
class ConfusionMetric : public Metric {
 public:
  void update_state(const Tensor& y_true, const Tensor& y_pred,
                    const Tensor& sample_weight = Tensor()) override;
  const std::vector<double>& thresholds() const { return thresholds_; }

 protected:
  // `kind` names the class in errors ("Precision"). Which counts to keep: tp, fp, tn, fn.
  ConfusionMetric(const char* kind, std::string name, std::vector<double> thresholds,
                  bool tp, bool fp, bool tn, bool fn, DType dtype);

  std::vector<double> thresholds_;
  Tensor threshold_column_;  // [T, 1] in the metric's dtype, on the variables' device
  VariablePtr true_positives_, false_positives_, true_negatives_, false_negatives_;
};

// tp / (tp + fp); 0 with no positive prediction. Scalar for one threshold, [T] for several.
// Thresholds must lie in [0, 1] (ValueError otherwise).
class Precision : public ConfusionMetric {
 public:
  explicit Precision(std::vector<double> thresholds = {0.5}, std::string name = "precision",
                     DType dtype = float32);
  Tensor result() const override;
};

// tp / (tp + fn); 0 with no positive label.
class Recall : public ConfusionMetric {
 public:
  explicit Recall(std::vector<double> thresholds = {0.5}, std::string name = "recall",
                  DType dtype = float32);
  Tensor result() const override;
};

// Area under the ROC or precision-recall curve, approximated over num_thresholds evenly spaced
// thresholds, as Keras: {-1e-7, 1/(n-1), 2/(n-1), ..., (n-2)/(n-1), 1+1e-7}. summation_method
// "interpolation" uses the trapezoidal rule for ROC and Davis & Goadrich's interpolation for
// PR; "minoring" / "majoring" use the lower / upper Riemann sum.
class AUC : public ConfusionMetric {
 public:
  // num_thresholds > 1; curve "ROC" or "PR"; summation_method "interpolation", "minoring" or
  // "majoring" (any case). ValueError otherwise.
  explicit AUC(int num_thresholds = 200, std::string curve = "ROC",
               std::string summation_method = "interpolation", std::string name = "auc",
               DType dtype = float32);
  Tensor result() const override;

  int num_thresholds() const { return int(thresholds_.size()); }
  const std::string& curve() const { return curve_; }
  const std::string& summation_method() const { return summation_; }

 private:
  Tensor interpolate_pr_auc() const;
  std::string curve_;      // "ROC" or "PR"
  std::string summation_;  // "interpolation", "minoring" or "majoring"
};

}  // namespace strata::metrics
