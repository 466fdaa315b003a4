#include "framework/metrics/metric.h"

#include "framework/autograd/grad_mode.h"
#include "framework/ops/creation.h"
#include "framework/ops/math_ops.h"
#include "framework/ops/shape_ops.h"
#include "framework/variables/creator_stack.h"

namespace strata::metrics {

Metric::Metric(std::string name, DType dtype) : name_(std::move(name)), dtype_(dtype) {
  if (!is_floating(dtype)) {
    throw DTypeError("Metric '" + name_ + "': dtype must be floating, got " + dtype_name(dtype));
  }
}

void Metric::update_state(const Tensor&, const Tensor&, const Tensor&) {
  throw ValueError(who() + ": update_state takes (values, sample_weight), not (y_true, y_pred)");
}

void Metric::update_state_from(const std::vector<Tensor>& inputs, const Tensor& sample_weight) {
  if (inputs.size() != 2) {
    throw ValueError(who() + ": update_state expects 2 inputs (y_true, y_pred), got " +
                     std::to_string(inputs.size()));
  }
  update_state(inputs[0], inputs[1], sample_weight);
}

void Metric::reset_state() {
  NoGradGuard no_grad;
  for (size_t i = 0; i < variables_.size(); ++i) {
    const VariablePtr& v = variables_[i];
    const Tensor init = initializers_[i] ? initializers_[i](v->shape(), v->dtype())
                                         : zeros(v->shape(), v->dtype(), v->device());
    v->assign(init);
  }
}

VariablePtr Metric::add_variable(const std::string& name, const Shape& shape, DType dtype,
                                 InitializerFn initializer) {
  VariableSpec spec;
  spec.name = name_ + "/" + name;
  spec.shape = shape;
  spec.dtype = dtype;
  spec.initializer = initializer;
  spec.trainable = false;
  // One copy per replica, summed when read: totals and counts add up across replicas.
  spec.synchronization = VariableSynchronization::kOnRead;
  spec.aggregation = VariableAggregation::kSum;
  VariablePtr v = create_variable(spec);
  variables_.push_back(v);
  initializers_.push_back(std::move(initializer));
  return v;
}

Device Metric::device() const {
  return variables_.empty() ? Device::cpu() : variables_.front()->device();
}

Tensor Metric::to_state(const Tensor& t) const {
  const Tensor c = t.dtype() == dtype_ ? t : cast(t, dtype_);
  return c.to(device());
}

Tensor divide_no_nan(const Tensor& a, const Tensor& b) {
  const Tensor zero = zeros(Shape{}, b.dtype(), b.device());
  const Tensor is_zero = equal(b, zero);
  const Tensor safe_b = where(is_zero, ones(Shape{}, b.dtype(), b.device()), b);
  return where(is_zero, zeros(Shape{}, a.dtype(), a.device()), a / safe_b);
}

namespace detail {

void require_defined(const std::string& metric, const char* what, const Tensor& t) {
  if (!t.defined()) throw ValueError(metric + ": " + what + " is undefined");
}

void check_batch(const std::string& metric, const Tensor& y_true, const Tensor& y_pred) {
  require_defined(metric, "y_true", y_true);
  require_defined(metric, "y_pred", y_pred);
  if (y_true.rank() > 0 && y_pred.rank() > 0 && y_true.dim(0) != y_pred.dim(0)) {
    throw ShapeError(metric + ": y_true and y_pred have different batch sizes: y_true " +
                     y_true.shape().to_string() + ", y_pred " + y_pred.shape().to_string());
  }
}

Tensor broadcast_weights(const std::string& metric, const Tensor& sample_weight,
                         const Tensor& values) {
  Tensor w = sample_weight.dtype() == values.dtype() ? sample_weight
                                                     : cast(sample_weight, values.dtype());
  w = w.to(values.device());
  if (w.rank() == values.rank() + 1 && w.dim(-1) == 1) w = squeeze(w, {-1});
  // Per-sample weights ([N]) against [N, C] values weigh every element of the sample.
  while (w.rank() < values.rank()) w = expand_dims(w, -1);
  bool fits = w.rank() == values.rank();
  for (int i = 0; fits && i < w.rank(); ++i) fits = w.dim(i) == 1 || w.dim(i) == values.dim(i);
  if (!fits) {
    throw ShapeError(metric + ": sample_weight of shape " + sample_weight.shape().to_string() +
                     " does not broadcast to the values' shape " + values.shape().to_string());
  }
  return broadcast_to(w, values.shape());
}

}  // namespace detail
}  // namespace strata::metrics
