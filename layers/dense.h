// Dense: output = activation(input @ kernel + bias), kernel [in, units], like keras.layers.Dense.
#pragma once

#include <string>

#include "framework/backend/kernel_params.h"
#include "framework/model/layer.h"

namespace strata {

struct DenseOptions {
  std::string activation = "linear";
  bool use_bias = true;
  InitializerFn kernel_initializer;  // glorot_uniform
  InitializerFn bias_initializer;    // zeros
  std::string name;

  DenseOptions& set_activation(std::string a) { activation = std::move(a); return *this; }
  DenseOptions& set_use_bias(bool b) { use_bias = b; return *this; }
  DenseOptions& set_kernel_initializer(InitializerFn f) { kernel_initializer = std::move(f); return *this; }
  DenseOptions& set_bias_initializer(InitializerFn f) { bias_initializer = std::move(f); return *this; }
  DenseOptions& set_name(std::string n) { name = std::move(n); return *this; }
};

class Dense : public Layer {
 public:
  explicit Dense(int64_t units, const std::string& activation = "linear");
  Dense(int64_t units, const DenseOptions& options);

  int64_t units() const { return units_; }
  const VariablePtr& kernel() const { return kernel_; }
  const VariablePtr& bias() const { return bias_; }

 protected:
  void build(const Shape& input_shape) override;
  Tensor call(const Tensor& x, bool training) override;

 private:
  int64_t units_;
  DenseOptions options_;
  Activation activation_;
  VariablePtr kernel_, bias_;
};

}  // namespace strata
