// Metric: the base of Keras' stateful metrics (keras.metrics.Metric).
//
//   metrics::SparseCategoricalAccuracy acc;
//   for (...) acc.update_state(labels, model(x));   // accumulates, on the device
//   Tensor value = acc.result();                     // a scalar tensor; read it when you print
//   acc.reset_state();                               // next epoch
//
// State lives only in Variables made by add_variable(), i.e. through create_variable() and the
// creator stack, non-trainable, synchronised on read and aggregated by sum: a distribution
// strategy can then keep one copy per replica and sum them when the result is read. Updates and
// results are tensor ops only (no host reads), so a GPU backend needs no sync per step.
#pragma once

#include <string>
#include <vector>

#include "framework/core/tensor.h"
#include "framework/variables/variable.h"

namespace strata::metrics {

class Metric {
 public:
  explicit Metric(std::string name, DType dtype = float32);
  virtual ~Metric() = default;
  Metric(const Metric&) = delete;
  Metric& operator=(const Metric&) = delete;

  // Keras' form for metrics of (y_true, y_pred): the default throws ValueError, for metrics such
  // as Mean that take (values, sample_weight) instead.
  virtual void update_state(const Tensor& y_true, const Tensor& y_pred,
                            const Tensor& sample_weight = Tensor());
  // The generic form, for code holding metrics of any kind (training loops, replica wrappers):
  // `inputs` are the arguments before the sample weight, {y_true, y_pred} or {values}. The
  // default forwards two inputs to update_state; Mean and Sum take one.
  virtual void update_state_from(const std::vector<Tensor>& inputs,
                                 const Tensor& sample_weight = Tensor());

  // The metric's value as a tensor computed from the state variables (scalar for every metric
  // here except Precision/Recall with several thresholds). A new tensor: later updates leave it.
  virtual Tensor result() const = 0;
  // Assigns every state variable its initial value.
  virtual void reset_state();

  const std::string& name() const { return name_; }
  DType dtype() const { return dtype_; }
  const std::vector<VariablePtr>& variables() const { return variables_; }

 protected:
  // Creates "<metric name>/<name>" through create_variable(): trainable=false,
  // synchronization=kOnRead, aggregation=kSum. The initializer defaults to zeros and is kept
  // for reset_state().
  VariablePtr add_variable(const std::string& name, const Shape& shape, DType dtype,
                           InitializerFn initializer = InitializerFn());
  VariablePtr add_variable(const std::string& name, const Shape& shape = Shape{}) {
    return add_variable(name, shape, dtype_);
  }

  // "<Kind> '<name>'", what errors start with; kind is the class name, set by subclasses.
  std::string who() const { return kind_ + " '" + name_ + "'"; }
  void set_kind(std::string kind) { kind_ = std::move(kind); }

  // `t` cast to the metric's dtype and moved to the device of its variables.
  Tensor to_state(const Tensor& t) const;
  Device device() const;

 private:
  std::string name_;
  std::string kind_ = "Metric";
  DType dtype_;
  std::vector<VariablePtr> variables_;
  std::vector<InitializerFn> initializers_;
};

// TensorFlow's divide_no_nan: a / b, and 0 where b == 0 (an empty metric reads 0, not NaN).
Tensor divide_no_nan(const Tensor& a, const Tensor& b);

namespace detail {
// Throws ValueError naming `metric` unless `t` is defined.
void require_defined(const std::string& metric, const char* what, const Tensor& t);
// Throws ShapeError naming `metric` and both shapes unless y_true and y_pred agree on the batch
// size (axis 0); scalars are left alone.
void check_batch(const std::string& metric, const Tensor& y_true, const Tensor& y_pred);
// Keras' broadcasting of sample weights onto `values`: the weight is matched in rank (a [N]
// weight against [N, 1] values gains the axis; [N, 1] against [N] loses it), then gains trailing
// axes until it broadcasts. ShapeError naming `metric` when it does not fit. Returns the weight
// broadcast to values' shape, in values' dtype.
Tensor broadcast_weights(const std::string& metric, const Tensor& sample_weight,
                         const Tensor& values);
}  // namespace detail

}  // namespace strata::metrics
