// KerasTensor: a symbolic tensor of the functional API. `Input(shape)` makes one; calling a
// layer on KerasTensors records a node of the graph and returns the outputs' KerasTensors;
// `Model(inputs, outputs)` then runs that graph on real tensors.
//
//   auto inputs = Input({28, 28, 1});
//   auto x = Conv2D(32, 3, "relu").name("conv1")(inputs);   // the graph owns the layer
//   auto outputs = Dense(10)(Flatten()(x));
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "framework/core/dtype.h"
#include "framework/core/shape.h"

namespace strata {

class Layer;
class KerasTensor;

// One call of a layer in the graph (an Input has no layer and no inputs).
struct FunctionalNode {
  std::shared_ptr<Layer> layer;  // null for an Input
  std::vector<KerasTensor> inputs;
  std::vector<Shape> output_shapes;  // batch dim -1
  std::vector<DType> output_dtypes;
  std::string input_name;  // for Input nodes
  int call_index = 0;      // how many times `layer` had been called before this node
};

class KerasTensor {
 public:
  KerasTensor() = default;
  KerasTensor(std::shared_ptr<FunctionalNode> node, int index) : node_(std::move(node)), index_(index) {}

  // Shape with -1 for the batch dimension (and any other unknown dimension).
  const Shape& shape() const;
  DType dtype() const;
  const std::shared_ptr<FunctionalNode>& node() const { return node_; }
  int index() const { return index_; }
  bool defined() const { return node_ != nullptr; }

 private:
  std::shared_ptr<FunctionalNode> node_;
  int index_ = 0;
};

// keras.Input: `shape` excludes the batch dimension; -1 marks other unknown dimensions.
KerasTensor Input(const Shape& shape, DType dtype = DType::kFloat32, const std::string& name = "");

}  // namespace strata
