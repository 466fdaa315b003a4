#include "layers/dense.h"

#include "framework/model/batch_axis.h"
#include "framework/ops/nn_ops.h"

namespace strata {

Dense::Dense(int64_t units, const Json& activation)
    : Dense(units, DenseOptions().activation(activation)) {}

Dense::Dense(int64_t units, const DenseOptions& options)
    : Layer("dense", options.name_),
      units_(units),
      options_(options),
      activation_(layer_utils::is_linear_activation(options.activation_)
                      ? nullptr
                      : layer_utils::activation_fn(options.activation_)) {
  if (units <= 0) {
    throw ValueError("Dense: units must be a positive integer, got " + std::to_string(units));
  }
  if (!options_.kernel_initializer_) options_.kernel_initializer_ = initializers::glorot_uniform();
  if (!options_.bias_initializer_) options_.bias_initializer_ = initializers::zeros();
}

void Dense::build(const Shape& input_shape) {
  if (input_shape.rank() < 2) {
    throw ShapeError("Dense '" + name() + "': expected inputs of rank >= 2 ([batch, features]), got " +
                     input_shape.to_string());
  }
  const int64_t in = input_shape[input_shape.rank() - 1];
  kernel_ = add_weight("kernel", Shape{in, units_},
                       {.initializer = options_.kernel_initializer_,
                        .regularizer = options_.kernel_regularizer_});
  if (options_.use_bias_) {
    bias_ = add_weight("bias", Shape{units_},
                       {.initializer = options_.bias_initializer_,
                        .regularizer = options_.bias_regularizer_});
  }
}

Tensor Dense::call(const Tensor& x, bool) {
  const int64_t in = kernel_->shape()[0];
  if (x.rank() < 2 || x.shape()[x.rank() - 1] != in) {
    throw ShapeError("Dense '" + name() + "': expected inputs with last dimension " +
                     std::to_string(in) + ", got shape " + x.shape().to_string() +
                     missing_batch_axis_hint(Shape{-1, in}, x.shape()));
  }
  Tensor y = matmul(x, kernel_->value());
  if (bias_) y = bias_add(y, bias_->value());
  return activation_ ? activation_(y) : y;
}

Json Dense::get_config() const {
  Json c = Layer::get_config();
  c.set("units", units_);
  c.set("activation", options_.activation_);
  c.set("use_bias", options_.use_bias_);
  c.set("kernel_initializer", options_.kernel_initializer_.to_json());
  c.set("bias_initializer", options_.bias_initializer_.to_json());
  c.set("kernel_regularizer", options_.kernel_regularizer_ ? options_.kernel_regularizer_.to_json() : Json());
  c.set("bias_regularizer", options_.bias_regularizer_ ? options_.bias_regularizer_.to_json() : Json());
  return c;
}

std::shared_ptr<Layer> Dense::from_config(const Json& c) {
  DenseOptions o;
  o.name(c.get("name", "").as_string())
      .activation(c.get("activation", "linear"))
      .use_bias(c.get("use_bias", true).as_bool());
  o.kernel_initializer(layer_utils::initializer_from(c, "kernel_initializer", {}))
      .bias_initializer(layer_utils::initializer_from(c, "bias_initializer", {}))
      .kernel_regularizer(layer_utils::regularizer_from(c, "kernel_regularizer"))
      .bias_regularizer(layer_utils::regularizer_from(c, "bias_regularizer"));
  return layer_utils::finish_from_config(std::make_shared<Dense>(c.at("units").as_int(), o), c);
}

}  // namespace strata
