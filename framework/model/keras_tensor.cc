#include "framework/model/keras_tensor.h"

#include "framework/core/error.h"
#include "framework/model/layer.h"

namespace strata {

const Shape& KerasTensor::shape() const {
  if (!node_) throw StateError("KerasTensor: undefined (default-constructed)");
  return node_->output_shapes[size_t(index_)];
}

DType KerasTensor::dtype() const {
  if (!node_) throw StateError("KerasTensor: undefined (default-constructed)");
  return node_->output_dtypes[size_t(index_)];
}

KerasTensor Input(const Shape& shape, DType dtype, const std::string& name) {
  for (int64_t d : shape) {
    if (d == 0 || d < -1) {
      throw ShapeError("Input: dimensions must be positive or -1 (unknown), got " + shape.to_string());
    }
  }
  auto node = std::make_shared<FunctionalNode>();
  std::vector<int64_t> dims{-1};
  dims.insert(dims.end(), shape.begin(), shape.end());
  node->output_shapes = {Shape(dims)};
  node->output_dtypes = {dtype};
  node->input_name = name.empty() ? unique_layer_name("input") : name;
  return KerasTensor(node, 0);
}

}  // namespace strata
