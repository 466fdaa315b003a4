#include "layers/activation_layers.h"

#include "framework/ops/nn_ops.h"

namespace strata {

using namespace layer_utils;

ActivationLayer::ActivationLayer(const Json& activation, const std::string& name)
    : Layer("activation", name), activation_(activation), fn_(activation_fn(activation)) {}

Tensor ActivationLayer::call(const Tensor& x, bool) { return fn_(x); }

Json ActivationLayer::get_config() const {
  Json c = Layer::get_config();
  c.set("activation", activation_);
  return c;
}

std::shared_ptr<Layer> ActivationLayer::from_config(const Json& c) {
  // Keras: Activation(None) is the identity, like "linear".
  return finish_from_config(std::make_shared<ActivationLayer>(c.get("activation", "linear"),
                                                              c.get("name", "").as_string()),
                            c);
}

ReLU::ReLU(const ReLUOptions& options) : Layer("re_lu", options.name_), options_(options) {
  // Keras' checks: a negative max_value or slope is a ValueError.
  if (options_.max_value_ && *options_.max_value_ < 0) {
    throw ValueError("ReLU: max_value must be >= 0 (or none), got " + std::to_string(*options_.max_value_));
  }
  if (options_.negative_slope_ < 0) {
    throw ValueError("ReLU: negative_slope must be >= 0, got " + std::to_string(options_.negative_slope_));
  }
}

Tensor ReLU::call(const Tensor& x, bool) {
  return keras_relu(x, options_.negative_slope_, options_.max_value_, options_.threshold_);
}

Json ReLU::get_config() const {
  Json c = Layer::get_config();
  c.set("max_value", options_.max_value_ ? Json(*options_.max_value_) : Json());
  c.set("negative_slope", options_.negative_slope_);
  c.set("threshold", options_.threshold_);
  return c;
}

std::shared_ptr<Layer> ReLU::from_config(const Json& c) {
  ReLUOptions o;
  o.name(c.get("name", "").as_string())
      .negative_slope(c.get("negative_slope", 0.0).as_double())
      .threshold(c.get("threshold", 0.0).as_double());
  const Json mv = c.get("max_value", Json());
  if (!mv.is_null()) o.max_value(mv.as_double());
  return finish_from_config(std::make_shared<ReLU>(o), c);
}

LeakyReLU::LeakyReLU(double negative_slope, const std::string& name)
    : Layer("leaky_re_lu", name), negative_slope_(negative_slope) {
  if (!(negative_slope >= 0)) {  // Keras' check (NaN fails it too)
    throw ValueError("LeakyReLU: negative_slope must be a float >= 0, got " +
                     std::to_string(negative_slope));
  }
}

Tensor LeakyReLU::call(const Tensor& x, bool) { return leaky_relu(x, float(negative_slope_)); }

Json LeakyReLU::get_config() const {
  Json c = Layer::get_config();
  c.set("negative_slope", negative_slope_);
  return c;
}

std::shared_ptr<Layer> LeakyReLU::from_config(const Json& c) {
  // Keras 2 wrote the slope as "alpha"; Keras 3 reads either.
  const double slope = c.get("negative_slope", c.get("alpha", 0.3)).as_double();
  return finish_from_config(std::make_shared<LeakyReLU>(slope, c.get("name", "").as_string()), c);
}

ELU::ELU(double alpha, const std::string& name) : Layer("elu", name), alpha_(alpha) {}

Tensor ELU::call(const Tensor& x, bool) { return elu(x, float(alpha_)); }

Json ELU::get_config() const {
  Json c = Layer::get_config();
  c.set("alpha", alpha_);
  return c;
}

std::shared_ptr<Layer> ELU::from_config(const Json& c) {
  return finish_from_config(
      std::make_shared<ELU>(c.get("alpha", 1.0).as_double(), c.get("name", "").as_string()), c);
}

Softmax::Softmax(int axis, const std::string& name) : Layer("softmax", name), axis_(axis) {}

Tensor Softmax::call(const Tensor& x, bool) {
  if (axis_ < -x.rank() || axis_ >= x.rank()) {
    throw ShapeError(describe(*this) + ": axis " + std::to_string(axis_) +
                     " is out of range for inputs of shape " + x.shape().to_string());
  }
  return softmax(x, axis_);
}

Json Softmax::get_config() const {
  Json c = Layer::get_config();
  c.set("axis", axis_);
  return c;
}

std::shared_ptr<Layer> Softmax::from_config(const Json& c) {
  return finish_from_config(
      std::make_shared<Softmax>(int(c.get("axis", -1).as_int()), c.get("name", "").as_string()), c);
}

}  // namespace strata
