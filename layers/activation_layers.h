// Activation layers: keras.layers.Activation, ReLU, LeakyReLU, ELU and Softmax. None has weights
// (PReLU, which learns its slope, is in prelu.h).
//
// The C++ class for Keras' `Activation` is ActivationLayer: strata::Activation is already the
// enum of eltwise kernels (kernel_params.h). Its class_name() and registry key are "Activation".
#pragma once

#include <optional>

#include "framework/model/layer.h"
#include "layers/layer_utils.h"

namespace strata {

// Applies an activation by Keras name ("relu", "softmax", "elu", ...) with Keras 3's defaults,
// or an activation_config(...) with arguments (keras_activation.h).
class ActivationLayer : public Layer {
 public:
  STRATA_LAYER(ActivationLayer)
  explicit ActivationLayer(const Json& activation, const std::string& name = "");
  static std::shared_ptr<Layer> from_config(const Json& config);
  std::string class_name() const override { return "Activation"; }
  Json get_config() const override;
  const Json& activation() const { return activation_; }
  bool is_plain_relu() const override {
    return layer_utils::is_plain_relu_activation(activation_);
  }

 protected:
  Tensor call(const Tensor& x, bool training) override;

 private:
  Json activation_;
  layer_utils::ActivationFn fn_;
};

struct ReLUOptions {
  std::optional<double> max_value_;  // none: unbounded
  double negative_slope_ = 0.0;
  double threshold_ = 0.0;
  std::string name_;

  ReLUOptions& max_value(double v) { max_value_ = v; return *this; }
  ReLUOptions& negative_slope(double v) { negative_slope_ = v; return *this; }
  ReLUOptions& threshold(double v) { threshold_ = v; return *this; }
  ReLUOptions& name(std::string n) { name_ = std::move(n); return *this; }
};

// Keras' ReLU (keras.activations.relu with the layer's arguments): max_value above max_value,
// x for threshold < x < max_value, negative_slope * (x - threshold) otherwise.
class ReLU : public Layer {
 public:
  STRATA_LAYER(ReLU)
  explicit ReLU(const ReLUOptions& options = {});
  static std::shared_ptr<Layer> from_config(const Json& config);
  std::string class_name() const override { return "ReLU"; }
  Json get_config() const override;
  bool is_plain_relu() const override {
    return !options_.max_value_ && options_.negative_slope_ == 0 && options_.threshold_ == 0;
  }

 protected:
  Tensor call(const Tensor& x, bool training) override;

 private:
  ReLUOptions options_;
};

// keras.layers.LeakyReLU: x for x >= 0, negative_slope * x below. Keras 3's default slope is 0.3
// (the layer's; the "leaky_relu" activation's is 0.2); Keras 2 configs name it "alpha".
class LeakyReLU : public Layer {
 public:
  STRATA_LAYER(LeakyReLU)
  explicit LeakyReLU(double negative_slope = 0.3, const std::string& name = "");
  static std::shared_ptr<Layer> from_config(const Json& config);
  std::string class_name() const override { return "LeakyReLU"; }
  Json get_config() const override;
  double negative_slope() const { return negative_slope_; }

 protected:
  Tensor call(const Tensor& x, bool training) override;

 private:
  double negative_slope_;
};

// keras.layers.ELU: x for x > 0, alpha * (exp(x) - 1) otherwise (alpha 1.0 by default).
class ELU : public Layer {
 public:
  STRATA_LAYER(ELU)
  explicit ELU(double alpha = 1.0, const std::string& name = "");
  static std::shared_ptr<Layer> from_config(const Json& config);
  std::string class_name() const override { return "ELU"; }
  Json get_config() const override;
  double alpha() const { return alpha_; }

 protected:
  Tensor call(const Tensor& x, bool training) override;

 private:
  double alpha_;
};

class Softmax : public Layer {
 public:
  STRATA_LAYER(Softmax)
  explicit Softmax(int axis = -1, const std::string& name = "");
  static std::shared_ptr<Layer> from_config(const Json& config);
  std::string class_name() const override { return "Softmax"; }
  Json get_config() const override;

 protected:
  Tensor call(const Tensor& x, bool training) override;

 private:
  int axis_;
};

}  // namespace strata
