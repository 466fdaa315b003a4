// Merging layers, called on a list of tensors: keras.layers.Add, Subtract, Multiply and
// Concatenate.
//
//   Tensor y = Add()({a, b, c});
//   KerasTensor z = (*std::make_shared<Concatenate>())({x1, x2});   // functional API
#pragma once

#include <vector>

#include "framework/model/layer.h"

namespace strata {

// The elementwise merges: shapes must be equal or broadcast (dims of 1), as in Keras.
class ElementwiseMerge : public Layer {
 protected:
  ElementwiseMerge(const std::string& base_name, const std::string& name) : Layer(base_name, name) {}
  void build_multi(const std::vector<Shape>& input_shapes) override;
  Tensor call_multi(const std::vector<Tensor>& xs, bool training) override;
  // Checks the count and compatibility of the shapes; ShapeError names the layer and shapes.
  void check_shapes(const std::vector<Shape>& shapes) const;
  virtual Tensor merge(const std::vector<Tensor>& xs) const = 0;
  virtual size_t exact_inputs() const { return 0; }  // 0: two or more
};

class Add : public ElementwiseMerge {
 public:
  STRATA_LAYER(Add)
  explicit Add(const std::string& name = "") : ElementwiseMerge("add", name) {}
  static std::shared_ptr<Layer> from_config(const Json& config);
  std::string class_name() const override { return "Add"; }
  bool can_fuse_relu() const override { return true; }

 protected:
  Tensor merge(const std::vector<Tensor>& xs) const override;
  // The last sum and the ReLU in one kernel (residual blocks).
  Tensor call_fused_relu(const std::vector<Tensor>& xs, bool training) override;
};

// inputs[0] - inputs[1]; exactly two inputs.
class Subtract : public ElementwiseMerge {
 public:
  STRATA_LAYER(Subtract)
  explicit Subtract(const std::string& name = "") : ElementwiseMerge("subtract", name) {}
  static std::shared_ptr<Layer> from_config(const Json& config);
  std::string class_name() const override { return "Subtract"; }

 protected:
  Tensor merge(const std::vector<Tensor>& xs) const override;
  size_t exact_inputs() const override { return 2; }
};

class Multiply : public ElementwiseMerge {
 public:
  STRATA_LAYER(Multiply)
  explicit Multiply(const std::string& name = "") : ElementwiseMerge("multiply", name) {}
  static std::shared_ptr<Layer> from_config(const Json& config);
  std::string class_name() const override { return "Multiply"; }

 protected:
  Tensor merge(const std::vector<Tensor>& xs) const override;
};

// Concatenates along `axis` (not the batch axis); other dims must match.
class Concatenate : public Layer {
 public:
  STRATA_LAYER(Concatenate)
  explicit Concatenate(int axis = -1, const std::string& name = "");
  static std::shared_ptr<Layer> from_config(const Json& config);
  std::string class_name() const override { return "Concatenate"; }
  Json get_config() const override;

 protected:
  void build_multi(const std::vector<Shape>& input_shapes) override;
  Tensor call_multi(const std::vector<Tensor>& xs, bool training) override;

 private:
  void check_shapes(const std::vector<Shape>& shapes) const;
  int axis_;
};

}  // namespace strata
