// Conv2D: 2-D convolution of NHWC inputs with a kernel (kh, kw, in/groups, filters), plus bias
// and activation, like keras.layers.Conv2D (channels_last only).
//
//   auto conv = std::make_shared<Conv2D>(32, 3, Conv2DOptions().padding("same").activation("relu"));
//   auto strided = std::make_shared<Conv2D>(64, IntPair{3, 3}, Conv2DOptions().strides(2));
#pragma once

#include "framework/model/layer.h"
#include "layers/layer_utils.h"

namespace strata {

struct Conv2DOptions {
  IntPair strides_ = 1;
  std::string padding_ = "valid";
  std::string data_format_ = "channels_last";
  IntPair dilation_rate_ = 1;
  int groups_ = 1;
  Json activation_ = "linear";  // a Keras name or activation_config(...)
  bool use_bias_ = true;
  Initializer kernel_initializer_;  // glorot_uniform
  Initializer bias_initializer_;    // zeros
  Regularizer kernel_regularizer_, bias_regularizer_;
  std::string name_;

  Conv2DOptions& strides(IntPair s) { strides_ = s; return *this; }
  Conv2DOptions& padding(std::string p) { padding_ = std::move(p); return *this; }
  Conv2DOptions& data_format(std::string f) { data_format_ = std::move(f); return *this; }
  Conv2DOptions& dilation_rate(IntPair d) { dilation_rate_ = d; return *this; }
  Conv2DOptions& groups(int g) { groups_ = g; return *this; }
  Conv2DOptions& activation(Json a) { activation_ = std::move(a); return *this; }
  Conv2DOptions& use_bias(bool b) { use_bias_ = b; return *this; }
  Conv2DOptions& kernel_initializer(Initializer i) { kernel_initializer_ = std::move(i); return *this; }
  Conv2DOptions& bias_initializer(Initializer i) { bias_initializer_ = std::move(i); return *this; }
  Conv2DOptions& kernel_regularizer(Regularizer r) { kernel_regularizer_ = std::move(r); return *this; }
  Conv2DOptions& bias_regularizer(Regularizer r) { bias_regularizer_ = std::move(r); return *this; }
  Conv2DOptions& name(std::string n) { name_ = std::move(n); return *this; }
};

class Conv2D : public Layer {
 public:
  STRATA_LAYER(Conv2D)
  Conv2D(int64_t filters, IntPair kernel_size, const Conv2DOptions& options = {});
  // Keras' positional form: Conv2D(32, 3, "relu") is Conv2D(filters, kernel_size, activation).
  Conv2D(int64_t filters, IntPair kernel_size, const Json& activation);
  static std::shared_ptr<Layer> from_config(const Json& config);

  std::string class_name() const override { return "Conv2D"; }
  Json get_config() const override;

  int64_t filters() const { return filters_; }
  const IntPair& kernel_size() const { return kernel_size_; }
  const VariablePtr& kernel() const { return kernel_; }
  const VariablePtr& bias() const { return bias_; }

 protected:
  void build(const Shape& input_shape) override;
  Tensor call(const Tensor& x, bool training) override;

 private:
  int64_t filters_;
  IntPair kernel_size_;
  Conv2DOptions options_;
  layer_utils::ActivationFn activation_;
  int64_t in_channels_ = 0;
  VariablePtr kernel_, bias_;
};

}  // namespace strata
