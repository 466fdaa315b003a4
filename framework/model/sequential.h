// Sequential: a stack of layers, each fed the previous one's output (keras.Sequential).
//
//   Sequential model({std::make_shared<Dense>(64, "relu"), std::make_shared<Dense>(10)});
//   model.build({-1, 784});   // optional: builds every layer now (for summary())
#pragma once

#include <memory>
#include <vector>

#include "framework/model/model.h"

namespace strata {

class Sequential : public Model {
 public:
  explicit Sequential(std::vector<std::shared_ptr<Layer>> layers = {},
                      const std::string& name = "");

  void add(std::shared_ptr<Layer> layer);
  // Removes the last layer (ValueError when empty).
  void pop();
  std::vector<std::shared_ptr<Layer>> layers() const override { return layers_; }
  std::string class_name() const override { return "Sequential"; }
  // {"name": ..., "layers": [{"class_name": ..., "config": ...}, ...]}
  Json get_config() const override;

  // Builds every layer for inputs of `input_shape` (batch dim included, -1 allowed), as
  // keras' model.build((None, 784)).
  void build(const Shape& input_shape) override;

 protected:
  // On the first eager call: only remember the input shape (the call itself builds the layers).
  void build_multi(const std::vector<Shape>& input_shapes) override;
  Tensor call(const Tensor& x, bool training) override;

 private:
  std::vector<std::shared_ptr<Layer>> layers_;
  Shape build_input_shape_;
};

}  // namespace strata
