#include "framework/optimizers/loss_scale_optimizer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "framework/autograd/grad_mode.h"
#include "framework/ops/creation.h"
#include "framework/ops/math_ops.h"
#include "framework/ops/shape_ops.h"
#include "framework/strategy/replica_context.h"
#include "framework/variables/creator_stack.h"

namespace strata::optimizers {
namespace {

std::string fmt(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

OptimizerConfig base_config(const LossScaleOptimizerOptions& o) {
  OptimizerConfig c;
  c.name = o.name_;
  return c;
}

// A scalar piece of the loss-scale state. kOnlyFirstReplica: every replica assigns the same
// value (their decisions agree), and both mirrored and central-storage variables accept that.
VariablePtr state_variable(const std::string& name, DType dtype, double initial) {
  VariableSpec spec;
  spec.name = name;
  spec.shape = Shape{};
  spec.dtype = dtype;
  spec.trainable = false;
  spec.autocast = false;
  spec.aggregation = VariableAggregation::kOnlyFirstReplica;
  spec.initializer = [initial](const Shape& shape, DType dt) { return full(shape, initial, dt); };
  return create_variable(spec);
}

// True when every defined floating gradient holds only finite values. The per-gradient flags are
// combined on the first gradient's device, so the host waits once, not once per gradient.
bool all_finite(const std::vector<Gradient>& grads) {
  std::vector<Tensor> flags;
  Device device = Device::cpu();
  for (const Gradient& gradient : grads) {
    const Tensor& g = gradient.numbers();  // a sparse gradient's rows
    if (!g.defined() || !is_floating(g.dtype()) || g.numel() == 0) continue;
    if (flags.empty()) device = g.device();
    flags.push_back(reduce_all(is_finite(g)).to(device));
  }
  if (flags.empty()) return true;
  return reduce_all(stack(flags)).item<bool>();
}

}  // namespace

LossScaleOptimizer::LossScaleOptimizer(std::shared_ptr<Optimizer> inner_optimizer,
                                       const LossScaleOptimizerOptions& options)
    : Optimizer("LossScaleOptimizer", /*learning_rate=*/0.0, base_config(options)),
      inner_(std::move(inner_optimizer)),
      initial_scale_(options.initial_scale_),
      dynamic_growth_steps_(options.dynamic_growth_steps_) {
  if (!inner_) {
    throw ValueError(name() + ": inner_optimizer is null; wrap an optimizer, e.g. "
                     "LossScaleOptimizer(std::make_shared<optimizers::Adam>())");
  }
  if (dynamic_cast<const LossScaleOptimizer*>(inner_.get()) != nullptr) {
    throw ValueError(name() + ": inner_optimizer '" + inner_->name() + "' is already a "
                     "LossScaleOptimizer; wrap the plain optimizer once");
  }
  // float32 holds the scale: it must be a positive finite float32.
  if (!(initial_scale_ > 0.0) || !std::isfinite(float(initial_scale_))) {
    throw ValueError(name() + ": initial_scale must be a finite number > 0, got " +
                     fmt(initial_scale_) + " (Keras' default is 2**15 = 32768)");
  }
  if (dynamic_growth_steps_ < 1) {
    throw ValueError(name() + ": dynamic_growth_steps must be >= 1, got " +
                     std::to_string(dynamic_growth_steps_));
  }
  step_counter_ = state_variable(name() + "/step_counter", DType::kInt64, 0.0);
  dynamic_scale_ = state_variable(name() + "/dynamic_scale", DType::kFloat32, initial_scale_);
}

double LossScaleOptimizer::loss_scale() const {
  NoGradGuard no_grad;
  return dynamic_scale_->value().item<double>();
}

Tensor LossScaleOptimizer::scale_loss(const Tensor& loss) const {
  if (!loss.defined()) throw ValueError(name() + ".scale_loss: the loss is undefined");
  if (!is_floating(loss.dtype())) {
    throw DTypeError(name() + ".scale_loss: the loss must be floating, got " +
                     dtype_name(loss.dtype()));
  }
  Tensor scale;
  {
    NoGradGuard no_grad;  // a constant factor: the gradient flows to the loss alone
    scale = cast(dynamic_scale_->value(), loss.dtype()).to(loss.device());
  }
  return multiply(loss, scale);
}

void LossScaleOptimizer::apply_gradients(const std::vector<Gradient>& grads,
                                         const std::vector<VariablePtr>& vars,
                                         bool skip_gradients_aggregation) {
  if (grads.size() != vars.size()) {
    throw ValueError(name() + ".apply_gradients: got " + std::to_string(grads.size()) +
                     " gradients for " + std::to_string(vars.size()) +
                     " variables; they must pair up one to one");
  }
  if (grads.empty()) return;
  NoGradGuard no_grad;
  // Read once, before any replica can write: the collectives below come first.
  const double scale = loss_scale();
  const int64_t good_steps = step_counter_->value().item<int64_t>();

  bool finite = all_finite(grads);
  // The replicas' gradients may differ (before aggregation, or a replica's own overflow): they
  // must still all skip or all update, or their copies and collectives would part ways.
  if (distribute::ReplicaContext* replica = distribute::current_replica_context();
      replica != nullptr && replica->num_replicas_in_sync() > 1) {
    Tensor flag = full(Shape{}, finite ? 1.0 : 0.0, DType::kFloat32, replica->device());
    replica->all_reduce(flag, ReduceOp::kMin);
    finite = flag.item<float>() == 1.0f;
  }

  if (!finite) {
    // Skip the step. Halve the scale, but never below 1 (TensorFlow's floor; Keras 3 has none,
    // and a scale that underflowed to 0 would turn the next update into NaN); a scale chosen
    // below 1 stays where it is.
    const double halved = std::max(scale / 2.0, std::min(scale, 1.0));
    dynamic_scale_->assign(Tensor::scalar<float>(float(halved)));
    step_counter_->assign(Tensor::scalar<int64_t>(0));
    return;
  }

  // Unscale. The scale is a power of two times the initial one, so with the default initial
  // scale the product is exact.
  const double inverse = 1.0 / scale;
  std::vector<Gradient> unscaled;
  unscaled.reserve(grads.size());
  for (const Gradient& g : grads) {
    // (dense, the rows of a sparse one, or a replica's shard)
    unscaled.push_back(!g.defined() || !is_floating(g.dtype()) ? g : g.scaled(inverse));
  }
  inner_->apply_gradients(unscaled, vars, skip_gradients_aggregation);

  if (good_steps + 1 >= dynamic_growth_steps_) {
    // Doubled unless that would overflow float32 (an infinite scale could never come down).
    const float doubled = float(scale * 2.0);
    if (std::isfinite(doubled)) dynamic_scale_->assign(Tensor::scalar<float>(doubled));
    step_counter_->assign(Tensor::scalar<int64_t>(0));
  } else {
    step_counter_->assign(Tensor::scalar<int64_t>(good_steps + 1));
  }
}

void LossScaleOptimizer::build(const std::vector<VariablePtr>& vars) { inner_->build(vars); }

void LossScaleOptimizer::exclude_from_weight_decay(std::vector<std::string> var_names) {
  inner_->exclude_from_weight_decay(std::move(var_names));
}

const VariablePtr& LossScaleOptimizer::iterations() const { return inner_->iterations(); }

int64_t LossScaleOptimizer::iteration_count() const { return inner_->iteration_count(); }

double LossScaleOptimizer::learning_rate() const { return inner_->learning_rate(); }

void LossScaleOptimizer::set_learning_rate(LearningRate learning_rate) {
  inner_->set_learning_rate(std::move(learning_rate));
}

const std::shared_ptr<LearningRateSchedule>& LossScaleOptimizer::learning_rate_schedule() const {
  return inner_->learning_rate_schedule();
}

std::vector<VariablePtr> LossScaleOptimizer::variables() const {
  std::vector<VariablePtr> out{step_counter_, dynamic_scale_};
  const std::vector<VariablePtr> inner = inner_->variables();
  out.insert(out.end(), inner.begin(), inner.end());
  return out;
}

VariablePtr LossScaleOptimizer::get_slot(const VariablePtr& var, const std::string& slot) const {
  return inner_->get_slot(var, slot);
}

Json LossScaleOptimizer::get_config() const {
  // The inner optimizer as Keras 3's serialize_keras_object writes it.
  const Json inner = Json::object({{"module", "keras.optimizers"},
                                   {"class_name", inner_->class_name()},
                                   {"config", inner_->get_config()},
                                   {"registered_name", nullptr}});
  return Json::object({{"name", name()},
                       {"inner_optimizer", inner},
                       {"initial_scale", initial_scale_},
                       {"dynamic_growth_steps", dynamic_growth_steps_}});
}

}  // namespace strata::optimizers
