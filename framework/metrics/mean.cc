#include "framework/metrics/mean.h"

#include <tuple>

#include "framework/autograd/grad_mode.h"
#include "framework/losses/loss_utils.h"
#include "framework/ops/creation.h"
#include "framework/ops/math_ops.h"
#include "framework/ops/shape_ops.h"

namespace strata::metrics {
namespace {

// Axes [from, rank) of a tensor of the given rank.
std::vector<int> axes_from(int from, int rank) {
  std::vector<int> axes;
  for (int a = from; a < rank; ++a) axes.push_back(a);
  return axes;
}

struct Samplewise {
  Tensor values;   // one value per sample ([N]) or a scalar, already weighted
  Tensor weights;  // the per-sample weights, undefined without sample_weight
};

// Keras' reduce_to_samplewise_values: the weight is matched in rank with the values, the values
// are reduced (mean or sum) down to the weight's rank and multiplied by the broadcast weight,
// then both are reduced to one value per sample.
Samplewise reduce_to_samplewise(const std::string& metric, Tensor values, Tensor weights,
                                bool use_mean) {
  auto reduce = [use_mean](const Tensor& x, int from) {
    if (from >= x.rank()) return x;
    const auto axes = axes_from(from, x.rank());
    return use_mean ? reduce_mean(x, axes) : reduce_sum(x, axes);
  };
  if (weights.defined()) {
    const Shape original = weights.shape();
    std::tie(values, weights) = losses::detail::match_ranks(values, weights);
    values = reduce(values, weights.rank());
    bool fits = weights.rank() <= values.rank();
    for (int i = 0; fits && i < weights.rank(); ++i) {
      const int64_t w = weights.dim(weights.rank() - 1 - i);
      fits = w == 1 || w == values.dim(values.rank() - 1 - i);
    }
    if (!fits) {
      throw ShapeError(metric + ": sample_weight of shape " + original.to_string() +
                       " does not broadcast to the values' shape " + values.shape().to_string());
    }
    weights = broadcast_to(weights, values.shape());
    values = values * weights;
    if (weights.rank() > 1) weights = reduce(weights, 1);
  }
  return {reduce(values, 1), weights};
}

}  // namespace

Mean::Mean(std::string name, DType dtype) : Metric(std::move(name), dtype) {
  set_kind("Mean");
  total_ = add_variable("total");
  count_ = add_variable("count");
}

void Mean::update_state(const Tensor& values, const Tensor& sample_weight) {
  detail::require_defined(who(), "values", values);
  NoGradGuard no_grad;
  const Samplewise s = reduce_to_samplewise(
      who(), to_state(values), sample_weight.defined() ? to_state(sample_weight) : Tensor(),
      /*use_mean=*/true);
  total_->assign_add(reduce_sum(s.values));
  if (s.weights.defined()) {
    count_->assign_add(reduce_sum(s.weights));
  } else {
    // The batch size is known on the host from the shape: no device read.
    const double n = s.values.rank() >= 1 ? double(s.values.dim(0)) : 1.0;
    count_->assign_add(full(Shape{}, n, dtype(), device()));
  }
}

void Mean::update_state(const Tensor& y_true, const Tensor& y_pred, const Tensor& sample_weight) {
  Metric::update_state(y_true, y_pred, sample_weight);
}

void Mean::update_state_from(const std::vector<Tensor>& inputs, const Tensor& sample_weight) {
  if (inputs.size() != 1) {
    throw ValueError(who() + ": update_state expects 1 input (values), got " +
                     std::to_string(inputs.size()));
  }
  update_state(inputs[0], sample_weight);
}

Tensor Mean::result() const { return divide_no_nan(total_->value(), count_->value()); }

Sum::Sum(std::string name, DType dtype) : Metric(std::move(name), dtype) {
  set_kind("Sum");
  total_ = add_variable("total");
}

void Sum::update_state(const Tensor& values, const Tensor& sample_weight) {
  detail::require_defined(who(), "values", values);
  NoGradGuard no_grad;
  const Samplewise s = reduce_to_samplewise(
      who(), to_state(values), sample_weight.defined() ? to_state(sample_weight) : Tensor(),
      /*use_mean=*/false);
  total_->assign_add(reduce_sum(s.values));
}

void Sum::update_state(const Tensor& y_true, const Tensor& y_pred, const Tensor& sample_weight) {
  Metric::update_state(y_true, y_pred, sample_weight);
}

void Sum::update_state_from(const std::vector<Tensor>& inputs, const Tensor& sample_weight) {
  if (inputs.size() != 1) {
    throw ValueError(who() + ": update_state expects 1 input (values), got " +
                     std::to_string(inputs.size()));
  }
  update_state(inputs[0], sample_weight);
}

// A copy, so that later updates do not change a result already handed out.
Tensor Sum::result() const { return total_->read_value(); }

MeanMetricWrapper::MeanMetricWrapper(Fn fn, std::string name, DType dtype)
    : Mean(std::move(name), dtype), fn_(std::move(fn)) {
  set_kind("MeanMetricWrapper");
  if (!fn_) throw ValueError(who() + ": fn is empty");
}

void MeanMetricWrapper::update_state(const Tensor& y_true, const Tensor& y_pred,
                                     const Tensor& sample_weight) {
  detail::check_batch(who(), y_true, y_pred);
  NoGradGuard no_grad;
  Mean::update_state(fn_(y_true, y_pred), sample_weight);
}

void MeanMetricWrapper::update_state_from(const std::vector<Tensor>& inputs,
                                          const Tensor& sample_weight) {
  Metric::update_state_from(inputs, sample_weight);
}

}  // namespace strata::metrics
