#include "framework/saving/functional_config.h"

#include <algorithm>
#include <map>
#include <set>

#include "framework/core/error.h"

namespace strata::saving {
namespace {

// [name, node, tensor] or Keras 2's [name, node, tensor, kwargs].
bool is_ref(const Json& j) {
  return j.is_array() && (j.size() == 3 || j.size() == 4) && j.at(size_t(0)).is_string() &&
         j.at(1).is_number() && j.at(2).is_number();
}

TensorRef to_ref(const Json& j) {
  return {j.at(size_t(0)).as_string(), j.at(1).as_int(), j.at(2).as_int()};
}

bool is_keras_tensor(const Json& j) {
  return j.is_object() && j.contains("class_name") && j.at("class_name").is_string() &&
         j.at("class_name").as_string() == "__keras_tensor__";
}

void flatten_into(const Json& j, const std::string& what, std::vector<TensorRef>& out) {
  if (is_ref(j)) {
    out.push_back(to_ref(j));
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) flatten_into(j.at(i), what, out);
  } else if (j.is_object()) {
    std::vector<std::string> keys = j.keys();
    std::sort(keys.begin(), keys.end());  // Keras' tree.flatten orders dicts by key
    for (const std::string& k : keys) flatten_into(j.at(k), what, out);
  } else {
    throw ValueError("model config: " + what + " holds " + j.dump() +
                     ", expected [layer name, node index, tensor index] entries");
  }
}

// The KerasTensors of a Keras 3 call structure (args or kwargs), in order.
void collect_keras_tensors(const Json& j, const std::string& layer, std::vector<TensorRef>& out) {
  if (is_keras_tensor(j)) {
    const Json history = j.get("config", Json::object()).get("keras_history", Json());
    if (!is_ref(history)) {
      throw ValueError("model config: layer '" + layer + "' is called on a tensor without a "
                       "valid keras_history ([layer, node, tensor]): " + j.dump());
    }
    out.push_back(to_ref(history));
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) collect_keras_tensors(j.at(i), layer, out);
  } else if (j.is_object()) {
    for (const std::string& k : j.keys()) collect_keras_tensors(j.at(k), layer, out);
  }
}

using NodeKey = std::pair<std::string, int64_t>;

// Keras 3's map_graph over a config (see the header).
class OperationOrder {
 public:
  explicit OperationOrder(const Json& config) {
    const Json layers = config.at("layers");
    for (size_t i = 0; i < layers.size(); ++i) {
      const Json l = layers.at(i);
      const std::string name = l.get("name", l.get("config", Json::object()).get("name", ""))
                                   .as_string();
      const Json inbound = l.get("inbound_nodes", Json::array());
      std::vector<std::vector<TensorRef>> calls;
      for (size_t n = 0; n < inbound.size(); ++n) {
        calls.push_back(read_node_call(inbound.at(n), name).inputs);
      }
      calls_[name] = std::move(calls);
    }
    inputs_ = flatten_tensor_refs(config.get("input_layers", Json::array()), "input_layers");
    outputs_ = flatten_tensor_refs(config.at("output_layers"), "output_layers");
  }

  std::vector<std::string> run() {
    for (const TensorRef& out : outputs_) visit(out);
    assign_depths();
    for (const TensorRef& in : inputs_) {  // inputs no output depends on
      if (!op_depth_.count(in.layer)) {
        set_op_depth(in.layer, 0);
        op_index_[in.layer] = -1;
      }
    }
    std::map<int, std::vector<std::string>, std::greater<int>> by_depth;
    for (const std::string& op : op_first_seen_) by_depth[op_depth_.at(op)].push_back(op);
    std::vector<std::string> order;
    for (auto& [depth, ops] : by_depth) {
      std::stable_sort(ops.begin(), ops.end(), [&](const std::string& a, const std::string& b) {
        return op_index_.at(a) < op_index_.at(b);
      });
      order.insert(order.end(), ops.begin(), ops.end());
    }
    return order;
  }

 private:
  const std::vector<TensorRef>& node_inputs(const NodeKey& node) const {
    static const std::vector<TensorRef> none;
    const auto it = calls_.find(node.first);
    if (it == calls_.end()) {
      throw ValueError("model config: a tensor comes from layer '" + node.first +
                       "', which the config does not list");
    }
    if (it->second.empty() && node.second == 0) return none;  // an InputLayer
    if (node.second < 0 || size_t(node.second) >= it->second.size()) {
      throw ValueError("model config: a tensor comes from call " + std::to_string(node.second) +
                       " of layer '" + node.first + "', which has " +
                       std::to_string(it->second.size()) + " call(s) in the config");
    }
    return it->second[size_t(node.second)];
  }

  // _build_map_helper: depth-first from a tensor to the inputs.
  void visit(const TensorRef& tensor) {
    const NodeKey node{tensor.layer, tensor.node};
    if (finished_.count(node)) return;
    if (in_progress_.count(node)) {
      throw ValueError("model config: the graph has a cycle through layer '" + tensor.layer + "'");
    }
    if (!op_index_.count(tensor.layer)) op_index_[tensor.layer] = int(op_index_.size());
    in_progress_.insert(node);
    for (const TensorRef& in : node_inputs(node)) visit(in);
    in_progress_.erase(node);
    finished_.insert(node);
    nodes_.push_back(node);
  }

  void set_op_depth(const std::string& op, int depth) {
    if (!op_depth_.count(op)) op_first_seen_.push_back(op);
    op_depth_[op] = depth;
  }

  // A node's depth is the longest path from it to an output; an operation takes the deepest of
  // its nodes' depths (a shared layer sits where its earliest call needs it).
  void assign_depths() {
    std::map<NodeKey, int> node_depth;
    for (auto it = nodes_.rbegin(); it != nodes_.rend(); ++it) {
      int depth = node_depth.emplace(*it, 0).first->second;
      const auto previous = op_depth_.find(it->first);
      if (previous != op_depth_.end()) depth = std::max(depth, previous->second);
      set_op_depth(it->first, depth);
      node_depth[*it] = depth;
      for (const TensorRef& in : node_inputs(*it)) {
        int& parent = node_depth[{in.layer, in.node}];
        parent = std::max(parent, depth + 1);
      }
    }
  }

  std::map<std::string, std::vector<std::vector<TensorRef>>> calls_;
  std::vector<TensorRef> inputs_, outputs_;
  std::set<NodeKey> finished_, in_progress_;
  std::vector<NodeKey> nodes_;              // inputs -> outputs
  std::map<std::string, int> op_index_;     // first visit of each operation
  std::map<std::string, int> op_depth_;
  std::vector<std::string> op_first_seen_;  // Python's dict insertion order of op_depth_
};

}  // namespace

std::vector<TensorRef> flatten_tensor_refs(const Json& structure, const std::string& what) {
  std::vector<TensorRef> out;
  if (!structure.is_null()) flatten_into(structure, what, out);
  return out;
}

NodeCall read_node_call(const Json& node_data, const std::string& layer) {
  NodeCall call;
  if (node_data.is_array()) {  // Keras 2: one [name, node, tensor, kwargs] per input tensor
    for (size_t i = 0; i < node_data.size(); ++i) {
      if (!is_ref(node_data.at(i))) {
        throw ValueError("model config: layer '" + layer + "' has an inbound node entry " +
                         node_data.at(i).dump() + ", expected [layer, node, tensor, {kwargs}]");
      }
      call.inputs.push_back(to_ref(node_data.at(i)));
    }
    call.as_list = call.inputs.size() > 1;
    return call;
  }
  if (!node_data.is_object() || !node_data.contains("args")) {
    throw ValueError("model config: layer '" + layer + "' has an inbound node " +
                     node_data.dump() + ", expected a list of [layer, node, tensor] (Keras 2) "
                     "or {\"args\": [...], \"kwargs\": {...}} (Keras 3)");
  }
  const Json args = node_data.at("args");
  collect_keras_tensors(args, layer, call.inputs);
  // layer([a, b]) records args = [[a, b]]; layer(a, b) records args = [a, b].
  call.as_list = args.is_array() && (args.size() != 1 || args.at(size_t(0)).is_array());
  std::vector<TensorRef> kwarg_tensors;
  collect_keras_tensors(node_data.get("kwargs", Json::object()), layer, kwarg_tensors);
  call.tensor_kwargs = !kwarg_tensors.empty();
  call.inputs.insert(call.inputs.end(), kwarg_tensors.begin(), kwarg_tensors.end());
  return call;
}

namespace {

using NodeIndexMap = std::map<std::string, std::map<int64_t, int64_t>>;

void note_refs(const Json& j, NodeIndexMap& used) {
  if (is_ref(j)) {
    used[j.at(size_t(0)).as_string()][j.at(1).as_int()] = 0;
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) note_refs(j.at(i), used);
  } else if (j.is_object()) {
    for (const std::string& k : j.keys()) note_refs(j.at(k), used);
  }
}

Json renumber(const Json& j, const NodeIndexMap& used) {
  if (is_ref(j)) {
    Json out = Json::array({j.at(size_t(0)), used.at(j.at(size_t(0)).as_string()).at(j.at(1).as_int()),
                            j.at(2)});
    if (j.size() == 4) out.push_back(j.at(3));
    return out;
  }
  if (j.is_array()) {
    Json out = Json::array();
    for (size_t i = 0; i < j.size(); ++i) out.push_back(renumber(j.at(i), used));
    return out;
  }
  if (j.is_object()) {
    Json out = Json::object();
    for (const std::string& k : j.keys()) out.set(k, renumber(j.at(k), used));
    return out;
  }
  return j;
}

}  // namespace

Json with_positional_node_indices(const Json& functional_config) {
  NodeIndexMap used;
  const Json layers = functional_config.at("layers");
  for (size_t i = 0; i < layers.size(); ++i) {
    note_refs(layers.at(i).get("inbound_nodes", Json::array()), used);
  }
  note_refs(functional_config.get("input_layers", Json::array()), used);
  note_refs(functional_config.get("output_layers", Json::array()), used);
  for (auto& [layer, indices] : used) {
    int64_t position = 0;
    for (auto& [index, pos] : indices) pos = position++;
  }
  Json out = functional_config;
  Json renumbered = Json::array();
  for (size_t i = 0; i < layers.size(); ++i) {
    Json l = layers.at(i);
    if (l.contains("inbound_nodes")) l.set("inbound_nodes", renumber(l.at("inbound_nodes"), used));
    renumbered.push_back(l);
  }
  out.set("layers", renumbered);
  for (const char* key : {"input_layers", "output_layers"}) {
    if (out.contains(key)) out.set(key, renumber(out.at(key), used));
  }
  return out;
}

std::vector<std::string> keras3_operation_order(const Json& functional_config) {
  return OperationOrder(functional_config).run();
}

}  // namespace strata::saving
