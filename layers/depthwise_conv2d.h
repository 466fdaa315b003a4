// DepthwiseConv2D: convolves each input channel with its own depth_multiplier filters, like
// keras.layers.DepthwiseConv2D. Weight "depthwise_kernel" is (kh, kw, in, depth_multiplier);
// output channel c*depth_multiplier + m comes from input channel c (Keras' order).
//
//   auto dw = std::make_shared<DepthwiseConv2D>(3, DepthwiseConv2DOptions().padding("same"));
#pragma once

#include "framework/model/layer.h"
#include "layers/layer_utils.h"

namespace strata {

struct DepthwiseConv2DOptions {
  IntPair strides_ = 1;
  std::string padding_ = "valid";
  int depth_multiplier_ = 1;
  std::string data_format_ = "channels_last";
  IntPair dilation_rate_ = 1;
  Json activation_ = "linear";  // a Keras name or activation_config(...)
  bool use_bias_ = true;
  Initializer depthwise_initializer_;  // glorot_uniform
  Initializer bias_initializer_;       // zeros
  Regularizer depthwise_regularizer_, bias_regularizer_;
  std::string name_;

  DepthwiseConv2DOptions& strides(IntPair s) { strides_ = s; return *this; }
  DepthwiseConv2DOptions& padding(std::string p) { padding_ = std::move(p); return *this; }
  DepthwiseConv2DOptions& depth_multiplier(int m) { depth_multiplier_ = m; return *this; }
  DepthwiseConv2DOptions& data_format(std::string f) { data_format_ = std::move(f); return *this; }
  DepthwiseConv2DOptions& dilation_rate(IntPair d) { dilation_rate_ = d; return *this; }
  DepthwiseConv2DOptions& activation(Json a) { activation_ = std::move(a); return *this; }
  DepthwiseConv2DOptions& use_bias(bool b) { use_bias_ = b; return *this; }
  DepthwiseConv2DOptions& depthwise_initializer(Initializer i) { depthwise_initializer_ = std::move(i); return *this; }
  DepthwiseConv2DOptions& bias_initializer(Initializer i) { bias_initializer_ = std::move(i); return *this; }
  DepthwiseConv2DOptions& depthwise_regularizer(Regularizer r) { depthwise_regularizer_ = std::move(r); return *this; }
  DepthwiseConv2DOptions& bias_regularizer(Regularizer r) { bias_regularizer_ = std::move(r); return *this; }
  DepthwiseConv2DOptions& name(std::string n) { name_ = std::move(n); return *this; }
};

class DepthwiseConv2D : public Layer {
 public:
  STRATA_LAYER(DepthwiseConv2D)
  explicit DepthwiseConv2D(IntPair kernel_size, const DepthwiseConv2DOptions& options = {});
  static std::shared_ptr<Layer> from_config(const Json& config);

  std::string class_name() const override { return "DepthwiseConv2D"; }
  Json get_config() const override;

  const VariablePtr& depthwise_kernel() const { return kernel_; }
  const VariablePtr& bias() const { return bias_; }

 protected:
  void build(const Shape& input_shape) override;
  Tensor call(const Tensor& x, bool training) override;

 private:
  IntPair kernel_size_;
  DepthwiseConv2DOptions options_;
  layer_utils::ActivationFn activation_;
  int64_t in_channels_ = 0;
  VariablePtr kernel_, bias_;
};

}  // namespace strata
