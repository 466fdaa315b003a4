#include "layers/functional_from_config.h"

#include <map>
#include <set>

#include "framework/mixed_precision/dtype_policy.h"
#include "framework/saving/functional_config.h"
#include "layers/layer_registry.h"

namespace strata {
namespace {

using saving::NodeCall;
using saving::TensorRef;

std::string describe(const TensorRef& r) {
  return "['" + r.layer + "', " + std::to_string(r.node) + ", " + std::to_string(r.tensor) + "]";
}

DType input_dtype(const Json& dtype) {
  if (dtype.is_null()) return DType::kFloat32;
  if (dtype.is_string()) return dtype_from_name(dtype.as_string());
  return mixed_precision::DTypePolicy::from_config(dtype).compute_dtype();
}

KerasTensor input_from_config(const Json& c, const std::string& name) {
  const Json batch_shape = c.contains("batch_input_shape") ? c.at("batch_input_shape")
                                                           : c.get("batch_shape", Json());
  if (!batch_shape.is_array() || batch_shape.size() == 0) {
    throw ValueError("model config: InputLayer '" + name + "' has no batch_shape / "
                     "batch_input_shape (got " + batch_shape.dump() + ")");
  }
  std::vector<int64_t> dims;
  for (size_t i = 1; i < batch_shape.size(); ++i) {
    dims.push_back(batch_shape.at(i).is_null() ? -1 : batch_shape.at(i).as_int());
  }
  return Input(Shape(dims), input_dtype(c.get("dtype", Json())), name);
}

struct PendingLayer {
  std::string name;
  std::shared_ptr<Layer> layer;
  std::vector<NodeCall> calls;  // not yet replayed, in order
};

class FunctionalBuilder {
 public:
  explicit FunctionalBuilder(const Json& config) : config_(config) {}

  std::shared_ptr<Model> build() {
    const Json layers = config_.at("layers");
    if (!layers.is_array()) {
      throw ValueError("model_from_json: a functional config's \"layers\" must be a list of "
                       "layer configs, got " + layers.dump().substr(0, 80));
    }
    for (size_t i = 0; i < layers.size(); ++i) add_layer(layers.at(i));
    find_node_offsets();
    replay_calls();
    std::vector<KerasTensor> inputs, outputs;
    for (const TensorRef& r : saving::flatten_tensor_refs(config_.get("input_layers", Json::array()),
                                                          "input_layers")) {
      inputs.push_back(tensor(r, "the model's inputs"));
    }
    for (const TensorRef& r : saving::flatten_tensor_refs(config_.at("output_layers"),
                                                          "output_layers")) {
      outputs.push_back(tensor(r, "the model's outputs"));
    }
    auto model = std::make_shared<Model>(inputs, outputs, config_.get("name", Json("")).as_string());
    const Json trainable = config_.get("trainable", Json(true));
    if (trainable.is_bool() && !trainable.as_bool()) model->set_trainable(false);
    return model;
  }

 private:
  void add_layer(const Json& entry) {
    const Json config = entry.get("config", Json::object());
    const std::string name = entry.get("name", config.get("name", Json(""))).as_string();
    if (produced_.count(name)) {
      throw ValueError("model config: two layers are named '" + name + "'");
    }
    produced_[name];
    if (entry.at("class_name").as_string() == "InputLayer") {
      produced_[name].push_back(input_from_config(config, name));
      return;
    }
    PendingLayer pending{name, layer_from_config(entry), {}};
    if (dynamic_cast<Model*>(pending.layer.get()) != nullptr) model_layers_.insert(name);
    const Json inbound = entry.get("inbound_nodes", Json::array());
    for (size_t n = 0; n < inbound.size(); ++n) {
      pending.calls.push_back(saving::read_node_call(inbound.at(n), name));
      for (const TensorRef& r : pending.calls.back().inputs) referenced_.insert({r.layer, r.node});
    }
    pending_.push_back(std::move(pending));
  }

  // Keras numbers the calls of a nested model from 1 (node 0 is its own construction); Strata's
  // own configs from 0. A nested model none of whose references uses node 0 is Keras-numbered.
  void find_node_offsets() {
    for (const char* key : {"input_layers", "output_layers"}) {
      for (const TensorRef& r : saving::flatten_tensor_refs(config_.get(key, Json::array()), key)) {
        referenced_.insert({r.layer, r.node});
      }
    }
    for (const std::string& name : model_layers_) {
      if (!referenced_.count({name, 0})) offset_[name] = 1;
    }
  }

  // The KerasTensor a reference names, or null when its layer's call has not been replayed yet.
  const KerasTensor* find(const TensorRef& r) const {
    const auto it = produced_.find(r.layer);
    if (it == produced_.end()) return nullptr;
    const auto off = offset_.find(r.layer);
    const int64_t node = r.node - (off == offset_.end() ? 0 : off->second);
    if (node < 0 || size_t(node) >= it->second.size()) return nullptr;
    return &it->second[size_t(node)];
  }

  KerasTensor tensor(const TensorRef& r, const std::string& reader) const {
    if (!produced_.count(r.layer)) {
      throw ValueError("model config: " + reader + " read " + describe(r) + ", but the config "
                       "has no layer named '" + r.layer + "'");
    }
    if (r.tensor != 0) {
      throw ValueError("model config: " + reader + " read output " + std::to_string(r.tensor) +
                       " of layer '" + r.layer + "' (" + describe(r) + "); Strata's layers have "
                       "one output each");
    }
    const KerasTensor* t = find(r);
    if (t == nullptr) {
      throw ValueError("model config: " + reader + " read " + describe(r) + ", but layer '" +
                       r.layer + "' has no such call in the config");
    }
    return *t;
  }

  bool ready(const NodeCall& call) const {
    for (const TensorRef& r : call.inputs) {
      if (produced_.count(r.layer) && find(r) == nullptr) return false;
    }
    return true;
  }

  // Keras' loop: replay every call whose inputs exist, until all are done or none can be.
  void replay_calls() {
    bool remaining = true;
    while (remaining) {
      remaining = false;
      bool progress = false;
      for (PendingLayer& p : pending_) {
        size_t done = 0;
        while (done < p.calls.size() && ready(p.calls[done])) {
          replay(p, p.calls[done]);
          ++done;
        }
        progress = progress || done > 0;
        p.calls.erase(p.calls.begin(), p.calls.begin() + long(done));
        remaining = remaining || !p.calls.empty();
      }
      if (remaining && !progress) throw_unresolved();
    }
  }

  void replay(const PendingLayer& p, const NodeCall& call) {
    const std::string reader = "layer '" + p.name + "'";
    if (call.tensor_kwargs) {
      throw ValueError("model config: " + reader + " is called with tensors as keyword "
                       "arguments, which Strata cannot replay; pass every tensor positionally");
    }
    if (call.inputs.empty()) {
      throw ValueError("model config: " + reader + " has a call without input tensors");
    }
    std::vector<KerasTensor> args;
    for (const TensorRef& r : call.inputs) args.push_back(tensor(r, reader));
    produced_[p.name].push_back(call.as_list ? (*p.layer)(args) : (*p.layer)(args[0]));
  }

  [[noreturn]] void throw_unresolved() const {
    std::string detail;
    for (const PendingLayer& p : pending_) {
      if (p.calls.empty()) continue;
      for (const TensorRef& r : p.calls[0].inputs) {
        if (!produced_.count(r.layer)) {
          throw ValueError("model config: layer '" + p.name + "' reads " + describe(r) +
                           ", but the config has no layer named '" + r.layer + "'");
        }
        if (find(r) == nullptr) {
          detail += (detail.empty() ? "" : "; ") + std::string("layer '") + p.name +
                    "' waits for " + describe(r);
        }
      }
    }
    throw ValueError("model config: the functional graph has loops or disconnected calls: " +
                     detail);
  }

  const Json& config_;
  std::map<std::string, std::vector<KerasTensor>> produced_;  // layer -> outputs of its calls
  std::vector<PendingLayer> pending_;                          // config order
  std::set<std::string> model_layers_;                         // nested models
  std::set<std::pair<std::string, int64_t>> referenced_;
  std::map<std::string, int64_t> offset_;
};

}  // namespace

std::shared_ptr<Model> functional_from_config(const Json& config) {
  return FunctionalBuilder(config).build();
}

}  // namespace strata
