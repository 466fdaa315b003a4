// Sequential: a stack of layers, each fed the previous one's output. (The Keras Model API with
// compile/fit arrives on top of this; for now it is a container layer.)
#pragma once

#include <memory>
#include <vector>

#include "framework/model/layer.h"

namespace strata {

class Sequential : public Layer {
 public:
  explicit Sequential(std::vector<std::shared_ptr<Layer>> layers = {},
                      const std::string& name = "");

  void add(std::shared_ptr<Layer> layer);
  const std::vector<std::shared_ptr<Layer>>& layers() const { return layers_; }
  std::vector<VariablePtr> weights() const override;
  void set_trainable(bool trainable) override;

 protected:
  Tensor call(const Tensor& x, bool training) override;

 private:
  std::vector<std::shared_ptr<Layer>> layers_;
};

}  // namespace strata
