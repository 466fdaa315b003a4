#include "layers/depthwise_conv2d.h"

#include "framework/ops/nn_ops.h"
#include "framework/ops/shape_ops.h"

namespace strata {

using namespace layer_utils;

DepthwiseConv2D::DepthwiseConv2D(IntPair kernel_size, const DepthwiseConv2DOptions& options)
    : Layer("depthwise_conv2d", options.name_),
      kernel_size_(kernel_size),
      options_(options),
      activation_(activation_fn(options.activation_)) {
  const char* cls = "DepthwiseConv2D";
  check_positive(kernel_size, "kernel_size", cls);
  check_positive(options_.strides_, "strides", cls);
  check_positive(options_.dilation_rate_, "dilation_rate", cls);
  options_.padding_ = normalize_padding(options_.padding_, cls);
  check_data_format(options_.data_format_, cls);
  if (options_.depth_multiplier_ < 1) {
    throw ValueError("DepthwiseConv2D: depth_multiplier must be a positive integer, got " +
                     std::to_string(options_.depth_multiplier_));
  }
  if ((options_.strides_.first > 1 || options_.strides_.second > 1) &&
      (options_.dilation_rate_.first > 1 || options_.dilation_rate_.second > 1)) {
    throw ValueError("DepthwiseConv2D: strides > 1 are incompatible with dilation_rate > 1, got "
                     "strides=" + options_.strides_.to_string() + ", dilation_rate=" +
                     options_.dilation_rate_.to_string());
  }
  if (!options_.depthwise_initializer_) options_.depthwise_initializer_ = initializers::glorot_uniform();
  if (!options_.bias_initializer_) options_.bias_initializer_ = initializers::zeros();
}

void DepthwiseConv2D::build(const Shape& s) {
  if (s.rank() != 4) {
    throw ShapeError(describe(*this) + ": expected inputs of rank 4 (batch, height, width, "
                     "channels), got shape " + s.to_string());
  }
  in_channels_ = s[3];
  const int64_t m = options_.depth_multiplier_;
  kernel_ = add_weight("depthwise_kernel", Shape{kernel_size_.first, kernel_size_.second, in_channels_, m},
                       {.initializer = options_.depthwise_initializer_,
                        .regularizer = options_.depthwise_regularizer_});
  if (options_.use_bias_) {
    bias_ = add_weight("bias", Shape{in_channels_ * m},
                       {.initializer = options_.bias_initializer_,
                        .regularizer = options_.bias_regularizer_});
  }
}

Tensor DepthwiseConv2D::call(const Tensor& x, bool) {
  if (x.rank() != 4 || x.shape()[3] != in_channels_) {
    throw ShapeError(describe(*this) + ": expected inputs of shape (batch, height, width, " +
                     std::to_string(in_channels_) + "), got " + x.shape().to_string());
  }
  // The (kh, kw, in, mult) buffer read row-major is exactly the grouped HWIO filter
  // (kh, kw, 1, in*mult) with groups = in: output channel c*mult + m belongs to group c.
  const Shape& k = kernel_->shape();
  const Tensor filters = reshape(kernel_->value(), Shape{k[0], k[1], 1, k[2] * k[3]});
  Tensor y;
  try {
    y = conv2d(x, filters, options_.strides_.pair(), options_.padding_,
               options_.dilation_rate_.pair(), int(in_channels_));
  } catch (const ShapeError& e) {
    throw ShapeError(describe(*this) + ": " + e.what());
  }
  if (bias_) y = bias_add(y, bias_->value());
  return activation_(y);
}

Json DepthwiseConv2D::get_config() const {
  Json c = Layer::get_config();
  c.set("kernel_size", kernel_size_.to_json());
  c.set("strides", options_.strides_.to_json());
  c.set("padding", options_.padding_);
  c.set("depth_multiplier", options_.depth_multiplier_);
  c.set("data_format", options_.data_format_);
  c.set("dilation_rate", options_.dilation_rate_.to_json());
  c.set("activation", options_.activation_);
  c.set("use_bias", options_.use_bias_);
  c.set("depthwise_initializer", options_.depthwise_initializer_.to_json());
  c.set("bias_initializer", options_.bias_initializer_.to_json());
  c.set("depthwise_regularizer", to_json_or_null(options_.depthwise_regularizer_));
  c.set("bias_regularizer", to_json_or_null(options_.bias_regularizer_));
  c.set("activity_regularizer", Json());
  c.set("depthwise_constraint", Json());
  c.set("bias_constraint", Json());
  return c;
}

std::shared_ptr<Layer> DepthwiseConv2D::from_config(const Json& c) {
  DepthwiseConv2DOptions o;
  o.name(c.get("name", "").as_string())
      .strides(IntPair::from_json(c.get("strides", 1), "DepthwiseConv2D strides"))
      .padding(c.get("padding", "valid").as_string())
      .depth_multiplier(int(c.get("depth_multiplier", 1).as_int()))
      .data_format(c.get("data_format", "channels_last").as_string())
      .dilation_rate(IntPair::from_json(c.get("dilation_rate", 1), "DepthwiseConv2D dilation_rate"))
      .activation(c.get("activation", "linear"))
      .use_bias(c.get("use_bias", true).as_bool())
      .depthwise_initializer(initializer_from(c, "depthwise_initializer", {}))
      .bias_initializer(initializer_from(c, "bias_initializer", {}))
      .depthwise_regularizer(regularizer_from(c, "depthwise_regularizer"))
      .bias_regularizer(regularizer_from(c, "bias_regularizer"));
  return finish_from_config(
      std::make_shared<DepthwiseConv2D>(
          IntPair::from_json(c.at("kernel_size"), "DepthwiseConv2D kernel_size"), o),
      c);
}

}  // namespace strata
