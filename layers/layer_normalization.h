// LayerNormalization: normalises each sample over `axis` (default the last), then scales by
// gamma and shifts by beta, like keras.layers.LayerNormalization. Composed from differentiable
// ops (reduce_mean, rsqrt, ...), so its gradients come from autograd.
//
//   auto ln = std::make_shared<LayerNormalization>(LayerNormalizationOptions().epsilon(1e-6));
#pragma once

#include <vector>

#include "framework/model/layer.h"

namespace strata {

struct LayerNormalizationOptions {
  std::vector<int> axis_{-1};  // one or more axes (not the batch axis)
  bool axis_is_list_ = false;  // only to write the config back as Keras read it
  double epsilon_ = 1e-3;
  bool center_ = true;
  bool scale_ = true;
  Initializer beta_initializer_;   // zeros
  Initializer gamma_initializer_;  // ones
  Regularizer beta_regularizer_, gamma_regularizer_;
  std::string name_;

  LayerNormalizationOptions& axis(int a) { axis_ = {a}; axis_is_list_ = false; return *this; }
  LayerNormalizationOptions& axis(std::vector<int> a) { axis_ = std::move(a); axis_is_list_ = true; return *this; }
  LayerNormalizationOptions& epsilon(double e) { epsilon_ = e; return *this; }
  LayerNormalizationOptions& center(bool c) { center_ = c; return *this; }
  LayerNormalizationOptions& scale(bool s) { scale_ = s; return *this; }
  LayerNormalizationOptions& beta_initializer(Initializer i) { beta_initializer_ = std::move(i); return *this; }
  LayerNormalizationOptions& gamma_initializer(Initializer i) { gamma_initializer_ = std::move(i); return *this; }
  LayerNormalizationOptions& beta_regularizer(Regularizer r) { beta_regularizer_ = std::move(r); return *this; }
  LayerNormalizationOptions& gamma_regularizer(Regularizer r) { gamma_regularizer_ = std::move(r); return *this; }
  LayerNormalizationOptions& name(std::string n) { name_ = std::move(n); return *this; }
};

class LayerNormalization : public Layer {
 public:
  STRATA_LAYER(LayerNormalization)
  explicit LayerNormalization(const LayerNormalizationOptions& options = {});
  static std::shared_ptr<Layer> from_config(const Json& config);

  std::string class_name() const override { return "LayerNormalization"; }
  Json get_config() const override;

  const VariablePtr& gamma() const { return gamma_; }
  const VariablePtr& beta() const { return beta_; }

 protected:
  void build(const Shape& input_shape) override;
  Tensor call(const Tensor& x, bool training) override;

 private:
  LayerNormalizationOptions options_;
  Shape built_shape_;       // the input shape at build (batch excluded from checks)
  std::vector<int> axes_;   // normalised, sorted
  Shape broadcast_shape_;   // gamma/beta reshaped to broadcast against the input
  VariablePtr gamma_, beta_;
};

}  // namespace strata
