// Activation layers: keras.layers.Activation, ReLU and Softmax. None has weights.
//
// The C++ class for Keras' `Activation` is ActivationLayer: strata::Activation is already the
// enum of eltwise kernels (kernel_params.h). Its class_name() and registry key are "Activation".
#pragma once

#include <optional>

#include "framework/model/layer.h"
#include "layers/layer_utils.h"

namespace strata {

// Applies an activation by Keras name ("relu", "softmax", "tanh", ...).
class ActivationLayer : public Layer {
 public:
  explicit ActivationLayer(const std::string& activation, const std::string& name = "");
  static std::shared_ptr<Layer> from_config(const Json& config);
  std::string class_name() const override { return "Activation"; }
  Json get_config() const override;
  const std::string& activation() const { return activation_; }
  bool is_plain_relu() const override { return activation_ == "relu"; }

 protected:
  Tensor call(const Tensor& x, bool training) override;

 private:
  std::string activation_;
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

// Keras' ReLU: max_value if x >= max_value; x if threshold <= x < max_value;
// negative_slope * (x - threshold) otherwise.
class ReLU : public Layer {
 public:
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

class Softmax : public Layer {
 public:
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
