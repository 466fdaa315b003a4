#include "layers/conv2d.h"

#include "framework/ops/nn_ops.h"

namespace strata {

using namespace layer_utils;

Conv2D::Conv2D(int64_t filters, IntPair kernel_size, const Json& activation)
    : Conv2D(filters, kernel_size, Conv2DOptions().activation(activation)) {}

Conv2D::Conv2D(int64_t filters, IntPair kernel_size, const Conv2DOptions& options)
    : Layer("conv2d", options.name_),
      filters_(filters),
      kernel_size_(kernel_size),
      options_(options),
      activation_(activation_fn(options.activation_)) {
  if (filters <= 0) {
    throw ValueError("Conv2D: filters must be a positive integer, got " + std::to_string(filters));
  }
  check_positive(kernel_size, "kernel_size", "Conv2D");
  check_positive(options_.strides_, "strides", "Conv2D");
  check_positive(options_.dilation_rate_, "dilation_rate", "Conv2D");
  options_.padding_ = normalize_padding(options_.padding_, "Conv2D");
  check_data_format(options_.data_format_, "Conv2D");
  if (options_.groups_ < 1 || filters % options_.groups_ != 0) {
    throw ValueError("Conv2D: groups must be a positive divisor of filters, got groups=" +
                     std::to_string(options_.groups_) + " for filters=" + std::to_string(filters));
  }
  // Keras forbids combining strides > 1 with dilation > 1.
  if ((options_.strides_.first > 1 || options_.strides_.second > 1) &&
      (options_.dilation_rate_.first > 1 || options_.dilation_rate_.second > 1)) {
    throw ValueError("Conv2D: strides > 1 are incompatible with dilation_rate > 1, got strides=" +
                     options_.strides_.to_string() + ", dilation_rate=" +
                     options_.dilation_rate_.to_string());
  }
  if (!options_.kernel_initializer_) options_.kernel_initializer_ = initializers::glorot_uniform();
  if (!options_.bias_initializer_) options_.bias_initializer_ = initializers::zeros();
}

void Conv2D::build(const Shape& s) {
  if (s.rank() != 4) {
    throw ShapeError(describe(*this) + ": expected inputs of rank 4 (batch, height, width, "
                     "channels), got shape " + s.to_string());
  }
  in_channels_ = s[3];
  if (in_channels_ % options_.groups_ != 0) {
    throw ShapeError(describe(*this) + ": input channels (" + std::to_string(in_channels_) +
                     ") must be divisible by groups=" + std::to_string(options_.groups_) +
                     "; input shape " + s.to_string());
  }
  kernel_ = add_weight("kernel",
                       Shape{kernel_size_.first, kernel_size_.second, in_channels_ / options_.groups_, filters_},
                       {.initializer = options_.kernel_initializer_,
                        .regularizer = options_.kernel_regularizer_});
  if (options_.use_bias_) {
    bias_ = add_weight("bias", Shape{filters_},
                       {.initializer = options_.bias_initializer_,
                        .regularizer = options_.bias_regularizer_});
  }
}

Tensor Conv2D::call(const Tensor& x, bool) {
  if (x.rank() != 4 || x.shape()[3] != in_channels_) {
    throw ShapeError(describe(*this) + ": expected inputs of shape (batch, height, width, " +
                     std::to_string(in_channels_) + "), got " + x.shape().to_string());
  }
  Tensor y;
  try {
    y = conv2d(x, kernel_->value(), options_.strides_.pair(), options_.padding_,
               options_.dilation_rate_.pair(), options_.groups_);
  } catch (const ShapeError& e) {  // e.g. a "valid" window larger than the input
    throw ShapeError(describe(*this) + ": " + e.what());
  }
  if (bias_) y = bias_add(y, bias_->value());
  return activation_(y);
}

Json Conv2D::get_config() const {
  Json c = Layer::get_config();
  c.set("filters", filters_);
  c.set("kernel_size", kernel_size_.to_json());
  c.set("strides", options_.strides_.to_json());
  c.set("padding", options_.padding_);
  c.set("data_format", options_.data_format_);
  c.set("dilation_rate", options_.dilation_rate_.to_json());
  c.set("groups", options_.groups_);
  c.set("activation", options_.activation_);
  c.set("use_bias", options_.use_bias_);
  c.set("kernel_initializer", options_.kernel_initializer_.to_json());
  c.set("bias_initializer", options_.bias_initializer_.to_json());
  c.set("kernel_regularizer", to_json_or_null(options_.kernel_regularizer_));
  c.set("bias_regularizer", to_json_or_null(options_.bias_regularizer_));
  c.set("activity_regularizer", Json());
  c.set("kernel_constraint", Json());
  c.set("bias_constraint", Json());
  return c;
}

std::shared_ptr<Layer> Conv2D::from_config(const Json& c) {
  Conv2DOptions o;
  o.name(c.get("name", "").as_string())
      .strides(IntPair::from_json(c.get("strides", 1), "Conv2D strides"))
      .padding(c.get("padding", "valid").as_string())
      .data_format(c.get("data_format", "channels_last").as_string())
      .dilation_rate(IntPair::from_json(c.get("dilation_rate", 1), "Conv2D dilation_rate"))
      .groups(int(c.get("groups", 1).as_int()))
      .activation(c.get("activation", "linear"))
      .use_bias(c.get("use_bias", true).as_bool())
      .kernel_initializer(initializer_from(c, "kernel_initializer", {}))
      .bias_initializer(initializer_from(c, "bias_initializer", {}))
      .kernel_regularizer(regularizer_from(c, "kernel_regularizer"))
      .bias_regularizer(regularizer_from(c, "bias_regularizer"));
  return finish_from_config(
      std::make_shared<Conv2D>(c.at("filters").as_int(),
                               IntPair::from_json(c.at("kernel_size"), "Conv2D kernel_size"), o),
      c);
}

}  // namespace strata
