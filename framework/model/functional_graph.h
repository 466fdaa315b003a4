// Internal: the graph of a functional Model, from its Input KerasTensors to its outputs, in an
// order where every node comes after the nodes it reads.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "framework/config/json.h"
#include "framework/core/tensor.h"
#include "framework/model/keras_tensor.h"

namespace strata {

class Layer;

class FunctionalGraph {
 public:
  // Throws ValueError when an output cannot be computed from `inputs` (a disconnected graph).
  FunctionalGraph(std::vector<KerasTensor> inputs, std::vector<KerasTensor> outputs);

  // Runs the graph. Inputs are checked against the Input shapes and cast to their dtypes.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs, bool training,
                          const std::string& model_name) const;

  const std::vector<KerasTensor>& inputs() const { return inputs_; }
  const std::vector<KerasTensor>& outputs() const { return outputs_; }
  // Distinct layers in execution order (shared layers once; Inputs excluded).
  const std::vector<std::shared_ptr<Layer>>& layers() const { return layers_; }
  // Keras' functional config: "layers" (with "inbound_nodes"), "input_layers", "output_layers".
  Json config(const std::string& model_name) const;

 private:
  std::string node_name(const FunctionalNode* node) const;
  // Finds the (layer, ReLU layer) node pairs run() computes with one fused call.
  void plan_relu_fusion();

  std::vector<KerasTensor> inputs_, outputs_;
  std::vector<std::shared_ptr<FunctionalNode>> order_;  // layer nodes, execution order
  std::vector<std::shared_ptr<Layer>> layers_;
  // A node -> the ReLU node whose value it computes along with its own (its own value is then
  // never materialised; run() finds the ReLU's value already there and skips it).
  std::map<const FunctionalNode*, const FunctionalNode*> fused_relu_of_;
};

}  // namespace strata
