#include "layers/batch_normalization.h"

#include "framework/autograd/grad_mode.h"
#include "framework/ops/creation.h"
#include "framework/ops/math_ops.h"
#include "framework/ops/nn_ops.h"
#include "framework/ops/shape_ops.h"
#include "framework/strategy/replica_context.h"
#include "layers/layer_utils.h"
#include "layers/sync_batch_norm.h"

namespace strata {

using namespace layer_utils;

BatchNormalization::BatchNormalization(const BatchNormalizationOptions& options)
    : Layer("batch_normalization", options.name_), options_(options) {
  if (!(options_.momentum_ >= 0.0 && options_.momentum_ <= 1.0)) {
    throw ValueError("BatchNormalization: momentum must be in [0, 1], got " +
                     std::to_string(options_.momentum_));
  }
  if (!(options_.epsilon_ > 0.0)) {
    throw ValueError("BatchNormalization: epsilon must be positive, got " +
                     std::to_string(options_.epsilon_));
  }
  auto& o = options_;
  if (!o.beta_initializer_) o.beta_initializer_ = initializers::zeros();
  if (!o.gamma_initializer_) o.gamma_initializer_ = initializers::ones();
  if (!o.moving_mean_initializer_) o.moving_mean_initializer_ = initializers::zeros();
  if (!o.moving_variance_initializer_) o.moving_variance_initializer_ = initializers::ones();
}

void BatchNormalization::build(const Shape& s) {
  if (s.rank() < 2) {
    throw ShapeError(describe(*this) + ": expected inputs of rank >= 2 (batch, ..., channels), "
                     "got shape " + s.to_string());
  }
  // The kernels normalise over every axis but the last; other axes (channels_first data) would
  // need a transpose, which Strata leaves to the model (it is NHWC throughout).
  if (options_.axis_ != -1 && options_.axis_ != s.rank() - 1) {
    throw ValueError(describe(*this) + ": only the last (channels) axis is supported, got axis=" +
                     std::to_string(options_.axis_) + " for inputs of shape " + s.to_string() +
                     "; Strata is channels-last, use axis=-1");
  }
  channels_ = s[s.rank() - 1];
  const auto& o = options_;
  const Shape c{channels_};
  // autocast off for all four (Keras 3): under a mixed policy they stay float32 inside call(),
  // the statistics are computed in float32 from the 16-bit inputs, and only y is 16-bit.
  if (o.scale_) {
    gamma_ = add_weight("gamma", c, {.initializer = o.gamma_initializer_,
                                     .regularizer = o.gamma_regularizer_,
                                     .autocast = false});
  }
  if (o.center_) {
    beta_ = add_weight("beta", c, {.initializer = o.beta_initializer_,
                                   .regularizer = o.beta_regularizer_,
                                   .autocast = false});
  }
  // kMean: a MirroredStrategy averages replicas' moving statistics, as Keras does.
  WeightOptions stat;
  stat.trainable = false;
  stat.autocast = false;
  stat.aggregation = VariableAggregation::kMean;
  stat.initializer = o.moving_mean_initializer_;
  moving_mean_ = add_weight("moving_mean", c, stat);
  stat.initializer = o.moving_variance_initializer_;
  moving_variance_ = add_weight("moving_variance", c, stat);
}

Tensor BatchNormalization::call(const Tensor& x, bool training) {
  return normalize(x, training, /*then_relu=*/false);
}

Tensor BatchNormalization::call_fused_relu(const std::vector<Tensor>& xs, bool training) {
  if (xs.size() != 1) wrong_input_count(1, xs.size());
  return normalize(xs[0], training, /*then_relu=*/true);
}

Tensor BatchNormalization::normalize(const Tensor& x, bool training, bool then_relu) {
  if (x.rank() < 2 || x.shape()[x.rank() - 1] != channels_) {
    throw ShapeError(describe(*this) + ": expected inputs with " + std::to_string(channels_) +
                     " channels on the last axis, got shape " + x.shape().to_string());
  }
  // Parameters and statistics in the variable dtype (float32 under a mixed policy, where x is
  // 16-bit: the batch-norm kernels take exactly that combination).
  const DType param = moving_mean_->dtype();
  const Tensor gamma = gamma_ ? gamma_->value() : ones(Shape{channels_}, param, x.device());
  const Tensor beta = beta_ ? beta_->value() : zeros(Shape{channels_}, param, x.device());
  const float eps = float(options_.epsilon_);
  // A frozen BN runs in inference mode even when training (Keras' fine-tuning behaviour).
  if (!training || !trainable()) {
    const Tensor y =
        batch_norm_inference(x, gamma, beta, moving_mean_->value(), moving_variance_->value(), eps);
    return then_relu ? relu(y) : y;
  }
  BatchNormResult r;
  if (options_.synchronized_ && distribute::in_multi_replica_context()) {
    // Built from ops in one dtype: 16-bit inputs join the float32 parameters, and y goes back.
    r = sync_batch_norm_training(x.dtype() == param ? x : cast(x, param), gamma, beta, eps);
    if (then_relu) r.y = relu(r.y);
    if (r.y.dtype() != x.dtype()) r.y = cast(r.y, x.dtype());
  } else {
    r = batch_norm_training(x, gamma, beta, eps, then_relu);
  }
  {
    NoGradGuard no_grad;
    const double m = options_.momentum_;
    moving_mean_->assign(add(multiply(moving_mean_->value(), m), multiply(r.mean, 1.0 - m)));
    moving_variance_->assign(add(multiply(moving_variance_->value(), m), multiply(r.variance, 1.0 - m)));
  }
  return r.y;
}

void BatchNormalization::set_trainable(bool trainable) {
  Layer::set_trainable(trainable);
  if (moving_mean_) moving_mean_->set_trainable(false);
  if (moving_variance_) moving_variance_->set_trainable(false);
}

Json BatchNormalization::get_config() const {
  const auto& o = options_;
  Json c = Layer::get_config();
  c.set("axis", o.axis_);
  c.set("momentum", o.momentum_);
  c.set("epsilon", o.epsilon_);
  c.set("center", o.center_);
  c.set("scale", o.scale_);
  c.set("beta_initializer", o.beta_initializer_.to_json());
  c.set("gamma_initializer", o.gamma_initializer_.to_json());
  c.set("moving_mean_initializer", o.moving_mean_initializer_.to_json());
  c.set("moving_variance_initializer", o.moving_variance_initializer_.to_json());
  c.set("beta_regularizer", to_json_or_null(o.beta_regularizer_));
  c.set("gamma_regularizer", to_json_or_null(o.gamma_regularizer_));
  c.set("beta_constraint", Json());
  c.set("gamma_constraint", Json());
  c.set("synchronized", o.synchronized_);
  return c;
}

std::shared_ptr<Layer> BatchNormalization::from_config(const Json& c) {
  BatchNormalizationOptions o;
  // Keras 2 writes the built axis as a list ([3]); a single entry is what Strata supports.
  const Json axis = c.get("axis", -1);
  const std::vector<int64_t> axes = axis.as_int_vector();
  if (axes.size() != 1) {
    throw ValueError("BatchNormalization: only a single (channels-last) axis is supported, got " + axis.dump());
  }
  o.name(c.get("name", "").as_string())
      .axis(int(axes[0]))
      .momentum(c.get("momentum", 0.99).as_double())
      .epsilon(c.get("epsilon", 1e-3).as_double())
      .center(c.get("center", true).as_bool())
      .scale(c.get("scale", true).as_bool())
      .synchronized(c.get("synchronized", false).as_bool())
      .beta_initializer(initializer_from(c, "beta_initializer", {}))
      .gamma_initializer(initializer_from(c, "gamma_initializer", {}))
      .moving_mean_initializer(initializer_from(c, "moving_mean_initializer", {}))
      .moving_variance_initializer(initializer_from(c, "moving_variance_initializer", {}))
      .beta_regularizer(regularizer_from(c, "beta_regularizer"))
      .gamma_regularizer(regularizer_from(c, "gamma_regularizer"));
  return finish_from_config(std::make_shared<BatchNormalization>(o), c);
}

SyncBatchNormalization::SyncBatchNormalization(BatchNormalizationOptions options)
    : BatchNormalization(options.synchronized(true)) {}

std::shared_ptr<Layer> SyncBatchNormalization::from_config(const Json& config) {
  // The same config as BatchNormalization's; the class name says synchronized.
  auto bn = std::static_pointer_cast<BatchNormalization>(BatchNormalization::from_config(config));
  return finish_from_config(std::make_shared<SyncBatchNormalization>(bn->options()), config);
}

}  // namespace strata
