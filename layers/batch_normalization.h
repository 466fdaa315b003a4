// BatchNormalization over the channels (last) axis, like keras.layers.BatchNormalization.
//
// training=true normalises with the batch's mean and (biased) variance and moves the moving
// statistics towards them: moving = moving * momentum + batch * (1 - momentum). Otherwise, and
// always when the layer is frozen (trainable=false, as Keras does for fine-tuning), it uses the
// moving statistics. Weights: gamma, beta (trainable; absent when scale/center is false),
// moving_mean, moving_variance (non-trainable, aggregation kMean so replicas' values average).
// Under a mixed policy (framework/mixed_precision/) all four stay float32 and are never
// autocast: the statistics are computed in float32 from the 16-bit inputs; only y is 16-bit.
//
//   auto bn = std::make_shared<BatchNormalization>(BatchNormalizationOptions().momentum(0.9));
#pragma once

#include "framework/model/layer.h"

namespace strata {

struct BatchNormalizationOptions {
  int axis_ = -1;  // channels-last only: -1 or rank-1
  double momentum_ = 0.99;
  double epsilon_ = 1e-3;
  bool center_ = true;
  bool scale_ = true;
  // Keras 3's synchronized=True (SyncBatchNormalization): under a distribution strategy, the
  // batch moments are computed over the global batch (all-reduced across replicas) instead of
  // each replica's slice.
  bool synchronized_ = false;
  Initializer beta_initializer_;             // zeros
  Initializer gamma_initializer_;            // ones
  Initializer moving_mean_initializer_;      // zeros
  Initializer moving_variance_initializer_;  // ones
  Regularizer beta_regularizer_, gamma_regularizer_;
  std::string name_;

  BatchNormalizationOptions& axis(int a) { axis_ = a; return *this; }
  BatchNormalizationOptions& momentum(double m) { momentum_ = m; return *this; }
  BatchNormalizationOptions& epsilon(double e) { epsilon_ = e; return *this; }
  BatchNormalizationOptions& center(bool c) { center_ = c; return *this; }
  BatchNormalizationOptions& scale(bool s) { scale_ = s; return *this; }
  BatchNormalizationOptions& synchronized(bool s) { synchronized_ = s; return *this; }
  BatchNormalizationOptions& beta_initializer(Initializer i) { beta_initializer_ = std::move(i); return *this; }
  BatchNormalizationOptions& gamma_initializer(Initializer i) { gamma_initializer_ = std::move(i); return *this; }
  BatchNormalizationOptions& moving_mean_initializer(Initializer i) { moving_mean_initializer_ = std::move(i); return *this; }
  BatchNormalizationOptions& moving_variance_initializer(Initializer i) { moving_variance_initializer_ = std::move(i); return *this; }
  BatchNormalizationOptions& beta_regularizer(Regularizer r) { beta_regularizer_ = std::move(r); return *this; }
  BatchNormalizationOptions& gamma_regularizer(Regularizer r) { gamma_regularizer_ = std::move(r); return *this; }
  BatchNormalizationOptions& name(std::string n) { name_ = std::move(n); return *this; }
};

class BatchNormalization : public Layer {
 public:
  STRATA_LAYER(BatchNormalization)
  explicit BatchNormalization(const BatchNormalizationOptions& options = {});
  static std::shared_ptr<Layer> from_config(const Json& config);

  std::string class_name() const override { return "BatchNormalization"; }
  Json get_config() const override;
  // Moving statistics stay non-trainable when the layer is unfrozen (Keras).
  void set_trainable(bool trainable) override;
  bool can_fuse_relu() const override { return !options_.synchronized_; }

  const BatchNormalizationOptions& options() const { return options_; }
  const VariablePtr& gamma() const { return gamma_; }
  const VariablePtr& beta() const { return beta_; }
  const VariablePtr& moving_mean() const { return moving_mean_; }
  const VariablePtr& moving_variance() const { return moving_variance_; }

 protected:
  void build(const Shape& input_shape) override;
  Tensor call(const Tensor& x, bool training) override;
  // relu(call(x)); training uses the backend's fused batch-norm + ReLU kernel.
  Tensor call_fused_relu(const std::vector<Tensor>& xs, bool training) override;

 private:
  Tensor normalize(const Tensor& x, bool training, bool then_relu);

  BatchNormalizationOptions options_;
  int64_t channels_ = 0;
  VariablePtr gamma_, beta_, moving_mean_, moving_variance_;
};

// tf.keras.layers.experimental.SyncBatchNormalization: BatchNormalization(synchronized=true).
// On several replicas in training, mean and variance are those of the global batch: each replica
// all-reduces its per-channel sum, sum of squares and count (gradients flow back through the
// all-reduce). Alone it is an ordinary BatchNormalization.
class SyncBatchNormalization : public BatchNormalization {
 public:
  STRATA_LAYER(SyncBatchNormalization)
  explicit SyncBatchNormalization(BatchNormalizationOptions options = {});
  static std::shared_ptr<Layer> from_config(const Json& config);
  std::string class_name() const override { return "SyncBatchNormalization"; }
};

}  // namespace strata
