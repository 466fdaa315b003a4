// Mean, Sum and MeanMetricWrapper (keras.metrics.Mean / Sum / MeanMetricWrapper).
//
//   metrics::Mean loss_tracker("loss");
//   loss_tracker.update_state(loss);                    // values, optional sample_weight
//   metrics::MeanMetricWrapper mse(losses::mse, "mse"); // the mean of a per-sample function
//   mse.update_state(y_true, y_pred);
#pragma once

#include <functional>
#include <string>

#include "framework/metrics/metric.h"

namespace strata::metrics {

// The weighted mean of every value seen: state "total" and "count". Values of shape [N, ...]
// are first reduced to one value per sample (the mean over the other axes), as Keras does, so
// `count` counts samples, or sums their weights when sample_weight is given.
class Mean : public Metric {
 public:
  explicit Mean(std::string name = "mean", DType dtype = float32);

  // sample_weight: scalar, [N], [N, 1], or any shape that broadcasts onto values' leading axes.
  void update_state(const Tensor& values, const Tensor& sample_weight = Tensor());
  // Metric's (y_true, y_pred) form, a ValueError for a metric of one input, declared here so
  // that the form above does not hide it (-Woverloaded-virtual, in clang's -Wall and GCC 13's,
  // would flag that in every build that includes this header).
  void update_state(const Tensor& y_true, const Tensor& y_pred,
                    const Tensor& sample_weight) override;
  void update_state_from(const std::vector<Tensor>& inputs,
                         const Tensor& sample_weight = Tensor()) override;
  Tensor result() const override;  // total / count, 0 before any update

 protected:
  VariablePtr total_, count_;
};

// The weighted sum of every value seen: state "total".
class Sum : public Metric {
 public:
  explicit Sum(std::string name = "sum", DType dtype = float32);

  void update_state(const Tensor& values, const Tensor& sample_weight = Tensor());
  // Metric's (y_true, y_pred) form: a ValueError, as for Mean.
  void update_state(const Tensor& y_true, const Tensor& y_pred,
                    const Tensor& sample_weight) override;
  void update_state_from(const std::vector<Tensor>& inputs,
                         const Tensor& sample_weight = Tensor()) override;
  Tensor result() const override;

 private:
  VariablePtr total_;
};

// The Mean of fn(y_true, y_pred): fn returns one value per sample (or per element; extra axes
// are averaged per sample). Gradients are never recorded.
class MeanMetricWrapper : public Mean {
 public:
  using Fn = std::function<Tensor(const Tensor& y_true, const Tensor& y_pred)>;
  MeanMetricWrapper(Fn fn, std::string name, DType dtype = float32);

  void update_state(const Tensor& y_true, const Tensor& y_pred,
                    const Tensor& sample_weight = Tensor()) override;
  void update_state_from(const std::vector<Tensor>& inputs,
                         const Tensor& sample_weight = Tensor()) override;

 private:
  Fn fn_;
};

}  // namespace strata::metrics
