#include "framework/model/functional_graph.h"

#include <algorithm>
#include <set>

#include "framework/model/batch_axis.h"
#include "framework/model/layer.h"
#include "framework/ops/shape_ops.h"

namespace strata {

FunctionalGraph::FunctionalGraph(std::vector<KerasTensor> inputs, std::vector<KerasTensor> outputs)
    : inputs_(std::move(inputs)), outputs_(std::move(outputs)) {
  if (inputs_.empty() || outputs_.empty()) {
    throw ValueError("Model: a functional model needs at least one input and one output");
  }
  std::set<const FunctionalNode*> input_nodes;
  for (const KerasTensor& k : inputs_) {
    if (!k.defined() || k.node()->layer) {
      throw ValueError("Model: inputs must be KerasTensors made by Input(...)");
    }
    input_nodes.insert(k.node().get());
  }
  // Post-order DFS from the outputs: a node is placed after everything it reads.
  std::set<const FunctionalNode*> done;
  std::vector<std::pair<std::shared_ptr<FunctionalNode>, size_t>> stack;
  for (const KerasTensor& out : outputs_) {
    if (!out.defined()) throw ValueError("Model: an output KerasTensor is undefined");
    stack.push_back({out.node(), 0});
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (done.count(node.get())) {
        stack.pop_back();
        continue;
      }
      if (!node->layer) {  // an Input
        if (!input_nodes.count(node.get())) {
          throw ValueError("Model: graph disconnected: output depends on Input '" +
                           node->input_name + "', which is not among the model's inputs");
        }
        done.insert(node.get());
        stack.pop_back();
        continue;
      }
      if (next < node->inputs.size()) {
        stack.push_back({node->inputs[next++].node(), 0});
        continue;
      }
      done.insert(node.get());
      order_.push_back(node);
      if (std::find(layers_.begin(), layers_.end(), node->layer) == layers_.end()) {
        layers_.push_back(node->layer);
      }
      stack.pop_back();
    }
  }
  plan_relu_fusion();
}

void FunctionalGraph::plan_relu_fusion() {
  // How many readers each node output has inside this graph (the model's outputs count).
  std::map<std::pair<const FunctionalNode*, int>, int> readers;
  for (const auto& node : order_) {
    for (const KerasTensor& k : node->inputs) ++readers[{k.node().get(), k.index()}];
  }
  for (const KerasTensor& k : outputs_) ++readers[{k.node().get(), k.index()}];
  for (const auto& node : order_) {
    if (node->inputs.size() != 1 || !node->layer->is_plain_relu()) continue;
    const KerasTensor& in = node->inputs[0];
    const FunctionalNode* producer = in.node().get();
    if (!producer->layer || !producer->layer->can_fuse_relu()) continue;  // an Input, or unable
    // A ReLU with another compute dtype (a float32 layer after a mixed one) casts: not fused.
    if (producer->layer->compute_dtype() != node->layer->compute_dtype()) continue;
    if (readers[{producer, in.index()}] != 1 || fused_relu_of_.count(producer)) continue;
    fused_relu_of_[producer] = node.get();
  }
}

std::vector<Tensor> FunctionalGraph::run(const std::vector<Tensor>& inputs, bool training,
                                         const std::string& model_name) const {
  if (inputs.size() != inputs_.size()) {
    throw ValueError("Model '" + model_name + "' expects " + std::to_string(inputs_.size()) +
                     " input(s), got " + std::to_string(inputs.size()));
  }
  std::map<std::pair<const FunctionalNode*, int>, Tensor> values;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Shape& want = inputs_[i].shape();
    Tensor x = inputs[i];
    bool ok = x.defined() && x.rank() == want.rank();
    for (int d = 1; ok && d < want.rank(); ++d) ok = want[d] < 0 || want[d] == x.shape()[d];
    if (!ok) {
      throw ShapeError("Model '" + model_name + "': input " + std::to_string(i) + " ('" +
                       inputs_[i].node()->input_name + "') expects shape " + want.to_string() +
                       " (-1 = any), got " + (x.defined() ? x.shape().to_string() : "undefined") +
                       (x.defined() ? missing_batch_axis_hint(want, x.shape()) : ""));
    }
    if (x.dtype() != inputs_[i].dtype()) x = cast(x, inputs_[i].dtype());  // as Keras casts
    values[{inputs_[i].node().get(), inputs_[i].index()}] = x;
  }
  for (const auto& node : order_) {
    if (values.count({node.get(), 0})) continue;  // a ReLU its producer computed, fused
    std::vector<Tensor> args;
    for (const KerasTensor& k : node->inputs) args.push_back(values.at({k.node().get(), k.index()}));
    const auto fused = fused_relu_of_.find(node.get());
    if (fused != fused_relu_of_.end()) {
      values[{fused->second, 0}] = node->layer->call_then_relu(args, training);
    } else {
      values[{node.get(), 0}] = (*node->layer)(args, training);
    }
  }
  std::vector<Tensor> out;
  for (const KerasTensor& k : outputs_) out.push_back(values.at({k.node().get(), k.index()}));
  return out;
}

std::string FunctionalGraph::node_name(const FunctionalNode* node) const {
  return node->layer ? node->layer->name() : node->input_name;
}

Json FunctionalGraph::config(const std::string& model_name) const {
  Json layers = Json::array();
  auto ref = [&](const KerasTensor& k) {
    return Json::array({node_name(k.node().get()), int64_t(k.node()->layer ? k.node()->call_index : 0),
                        int64_t(k.index())});
  };
  for (const KerasTensor& in : inputs_) {
    std::vector<int64_t> dims = in.shape().dims();
    Json shape = Json::array();
    for (int64_t d : dims) shape.push_back(d < 0 ? Json() : Json(d));
    Json config = Json::object({{"batch_input_shape", shape},
                                {"dtype", dtype_name(in.dtype())},
                                {"sparse", false},
                                {"ragged", false},
                                {"name", in.node()->input_name}});
    layers.push_back(Json::object({{"class_name", "InputLayer"}, {"config", config},
                                   {"name", in.node()->input_name},
                                   {"inbound_nodes", Json::array()}}));
  }
  for (const auto& layer : layers_) {
    Json inbound = Json::array();
    for (const auto& node : order_) {
      if (node->layer != layer) continue;
      Json call = Json::array();
      for (const KerasTensor& k : node->inputs) {
        Json r = ref(k);
        r.push_back(Json::object());
        call.push_back(r);
      }
      inbound.push_back(call);
    }
    layers.push_back(Json::object({{"class_name", layer->class_name()},
                                   {"config", layer->get_config()},
                                   {"name", layer->name()},
                                   {"inbound_nodes", inbound}}));
  }
  Json input_layers = Json::array(), output_layers = Json::array();
  for (const KerasTensor& k : inputs_) input_layers.push_back(ref(k));
  for (const KerasTensor& k : outputs_) output_layers.push_back(ref(k));
  return Json::object({{"name", model_name}, {"layers", layers}, {"input_layers", input_layers},
                       {"output_layers", output_layers}});
}

}  // namespace strata
