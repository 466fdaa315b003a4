#include "layers/dense.h"

#include "framework/ops/nn_ops.h"

namespace strata {

Dense::Dense(int64_t units, const std::string& activation)
    : Dense(units, DenseOptions().set_activation(activation)) {}

Dense::Dense(int64_t units, const DenseOptions& options)
    : Layer("dense", options.name),
      units_(units),
      options_(options),
      activation_(activation_from_name(options.activation)) {
  if (units <= 0) {
    throw ValueError("Dense: units must be a positive integer, got " + std::to_string(units));
  }
}

void Dense::build(const Shape& input_shape) {
  if (input_shape.rank() < 2) {
    throw ShapeError("Dense '" + name() + "': expected inputs of rank >= 2 ([batch, features]), got " +
                     input_shape.to_string());
  }
  const int64_t in = input_shape[input_shape.rank() - 1];
  WeightOptions k;
  k.initializer = options_.kernel_initializer ? options_.kernel_initializer
                                              : initializers::glorot_uniform();
  kernel_ = add_weight("kernel", Shape{in, units_}, k);
  if (options_.use_bias) {
    WeightOptions b;
    b.initializer = options_.bias_initializer ? options_.bias_initializer : initializers::zeros();
    bias_ = add_weight("bias", Shape{units_}, b);
  }
}

Tensor Dense::call(const Tensor& x, bool) {
  const int64_t in = kernel_->shape()[0];
  if (x.rank() < 2 || x.shape()[x.rank() - 1] != in) {
    throw ShapeError("Dense '" + name() + "': expected inputs with last dimension " +
                     std::to_string(in) + ", got shape " + x.shape().to_string());
  }
  Tensor y = matmul(x, kernel_->value());
  if (bias_) y = bias_add(y, bias_->value());
  return activation_ == Activation::kLinear ? y : activation(y, activation_);
}

}  // namespace strata
