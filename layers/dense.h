// Dense: output = activation(input @ kernel + bias), kernel [in, units], like keras.layers.Dense.
//
//   auto d = std::make_shared<Dense>(64, DenseOptions().activation("relu")
//                                          .kernel_regularizer(regularizers::l2(1e-4)));
#pragma once

#include <string>

#include "framework/model/layer.h"
#include "layers/layer_utils.h"

namespace strata {

struct DenseOptions {
  Json activation_ = "linear";  // a Keras name or activation_config(...)
  bool use_bias_ = true;
  Initializer kernel_initializer_;  // glorot_uniform
  Initializer bias_initializer_;    // zeros
  Regularizer kernel_regularizer_, bias_regularizer_;
  std::string name_;

  DenseOptions& activation(Json a) { activation_ = std::move(a); return *this; }
  DenseOptions& use_bias(bool b) { use_bias_ = b; return *this; }
  DenseOptions& kernel_initializer(Initializer i) { kernel_initializer_ = std::move(i); return *this; }
  DenseOptions& bias_initializer(Initializer i) { bias_initializer_ = std::move(i); return *this; }
  DenseOptions& kernel_regularizer(Regularizer r) { kernel_regularizer_ = std::move(r); return *this; }
  DenseOptions& bias_regularizer(Regularizer r) { bias_regularizer_ = std::move(r); return *this; }
  DenseOptions& name(std::string n) { name_ = std::move(n); return *this; }
};

class Dense : public Layer {
 public:
  STRATA_LAYER(Dense)
  explicit Dense(int64_t units, const Json& activation = "linear");
  Dense(int64_t units, const DenseOptions& options);
  static std::shared_ptr<Layer> from_config(const Json& config);

  std::string class_name() const override { return "Dense"; }
  Json get_config() const override;

  int64_t units() const { return units_; }
  const VariablePtr& kernel() const { return kernel_; }
  const VariablePtr& bias() const { return bias_; }

 protected:
  void build(const Shape& input_shape) override;
  Tensor call(const Tensor& x, bool training) override;

 private:
  int64_t units_;
  DenseOptions options_;
  layer_utils::ActivationFn activation_;  // null for "linear"
  VariablePtr kernel_, bias_;
};

}  // namespace strata
