// PReLU: a leaky ReLU whose negative slope is learned per element, like keras.layers.PReLU:
// y = x for x >= 0, alpha * x otherwise, with "alpha" of the input's shape without the batch axis.
// `shared_axes` (1-based, batch excluded) share one alpha along those axes, e.g. {1, 2} for one
// slope per channel of an image.
//
//   auto prelu = PReLU(PReLUOptions().shared_axes({1, 2}));
#pragma once

#include <vector>

#include "framework/model/layer.h"

namespace strata {

struct PReLUOptions {
  Initializer alpha_initializer_;  // zeros (Keras' "Zeros")
  Regularizer alpha_regularizer_;
  std::vector<int> shared_axes_;   // none shared by default
  std::string name_;

  PReLUOptions& alpha_initializer(Initializer i) { alpha_initializer_ = std::move(i); return *this; }
  PReLUOptions& alpha_regularizer(Regularizer r) { alpha_regularizer_ = std::move(r); return *this; }
  PReLUOptions& shared_axes(std::vector<int> axes) { shared_axes_ = std::move(axes); return *this; }
  PReLUOptions& name(std::string n) { name_ = std::move(n); return *this; }
};

class PReLU : public Layer {
 public:
  STRATA_LAYER(PReLU)
  explicit PReLU(const PReLUOptions& options = {});
  static std::shared_ptr<Layer> from_config(const Json& config);
  std::string class_name() const override { return "PReLU"; }
  Json get_config() const override;
  const VariablePtr& alpha() const { return alpha_; }

 protected:
  void build(const Shape& input_shape) override;
  Tensor call(const Tensor& x, bool training) override;

 private:
  PReLUOptions options_;
  VariablePtr alpha_;
};

}  // namespace strata
