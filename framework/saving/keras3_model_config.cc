#include "framework/saving/keras3_model_config.h"

#include <map>
#include <set>

#include "framework/core/error.h"
#include "framework/model/model.h"
#include "framework/saving/functional_config.h"
#include "framework/saving/keras3_compile_config.h"
#include "framework/saving/keras3_layer_config.h"

namespace strata::saving {
namespace {

// Keras 3 classes that override build(), and so record a build_config once built (3.10).
const std::set<std::string>& classes_with_build_config() {
  static const std::set<std::string> classes = {
      "Dense",     "Embedding", "Conv2D", "DepthwiseConv2D", "BatchNormalization",
      "LayerNormalization", "Add", "Subtract", "Multiply", "Concatenate", "Normalization",
      "Reshape"};
  return classes;
}

Json shape_json(const Shape& shape) {
  if (shape.rank() == 0) return Json();  // never called: unknown
  Json out = Json::array();
  for (int64_t d : shape.dims()) out.push_back(d < 0 ? Json() : Json(d));
  return out;
}

Json serialize_model(const Model& model);

// serialize_keras_object of a layer inside a model (nested models included).
Json serialize_layer(const Layer& layer) {
  if (const auto* model = dynamic_cast<const Model*>(&layer)) return serialize_model(*model);
  return keras3_layer_entry(
      Json::object({{"class_name", layer.class_name()}, {"config", layer.get_config()}}));
}

void add_build_config(Json& entry, const Json& input_shape) {
  const std::string cls = entry.at("class_name").as_string();
  if (classes_with_build_config().count(cls) && !input_shape.is_null()) {
    entry.set("build_config", Json::object({{"input_shape", input_shape}}));
  }
}

Json input_layer_entry(const Json& keras2_config, const std::string& name) {
  const Json shape = keras2_config.contains("batch_input_shape")
                         ? keras2_config.at("batch_input_shape")
                         : keras2_config.get("batch_shape", Json());
  return Json::object(
      {{"module", "keras.layers"},
       {"class_name", "InputLayer"},
       {"config", Json::object({{"batch_shape", shape},
                                {"dtype", keras2_config.get("dtype", Json("float32"))},
                                {"sparse", false},
                                {"ragged", false},
                                {"name", name}})},
       {"registered_name", nullptr}});
}

Json sequential_config(const Model& model, Json& build_config) {
  const Json strata = model.get_config();
  const Json entries = strata.at("layers");
  const std::vector<std::shared_ptr<Layer>> layers = model.layers();
  Json out_layers = Json::array();
  Json input_shape;  // the batch shape of the Input, when the model has one
  size_t next = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Json entry = entries.at(i);
    if (entry.at("class_name").as_string() == "InputLayer") {
      const Json c = entry.at("config");
      out_layers.push_back(input_layer_entry(c, c.get("name", Json(model.name() + "_input")).as_string()));
      input_shape = out_layers.at(out_layers.size() - 1).at("config").at("batch_shape");
      continue;
    }
    if (next >= layers.size()) {
      throw InternalError("keras3_model_config: Sequential '" + model.name() +
                          "' lists more layers in its config than it has");
    }
    const Layer& layer = *layers[next];
    Json e = serialize_layer(layer);
    add_build_config(e, next == 0 ? input_shape : shape_json(layers[next - 1]->output_shape()));
    out_layers.push_back(e);
    ++next;
  }
  Json config = Json::object({{"name", model.name()},
                              {"trainable", model.trainable()},
                              {"dtype", keras3_dtype_policy(Json(model.dtype_policy().name()))},
                              {"layers", out_layers}});
  if (!input_shape.is_null()) {
    config.set("build_input_shape", input_shape);
    build_config = Json::object({{"input_shape", input_shape}});
  }
  return config;
}

// The functional graph in Keras 3's form (see the header).
class FunctionalConverter {
 public:
  explicit FunctionalConverter(const Model& model)
      : model_(model), config_(with_positional_node_indices(model.get_config())) {
    const Json layers = config_.at("layers");
    for (size_t i = 0; i < layers.size(); ++i) {
      const Json l = layers.at(i);
      entries_[l.at("name").as_string()] = l;
    }
  }

  Json run() {
    Json layers = Json::array();
    for (const std::string& name : keras3_operation_order(config_)) {
      const Json entry = entries_.at(name);
      if (entry.at("class_name").as_string() == "InputLayer") {
        Json e = input_layer_entry(entry.at("config"), name);
        e.set("name", name);
        e.set("inbound_nodes", Json::array());
        layers.push_back(e);
        continue;
      }
      Json e = serialize_layer(*model_.get_layer(name));
      Json nodes = Json::array();
      const Json inbound = entry.get("inbound_nodes", Json::array());
      for (size_t n = 0; n < inbound.size(); ++n) {
        const NodeCall call = read_node_call(inbound.at(n), name);
        if (n == 0) add_build_config(e, input_shapes(call));
        nodes.push_back(node_json(call));
      }
      e.set("name", name);
      e.set("inbound_nodes", nodes);
      layers.push_back(e);
    }
    return Json::object({{"name", model_.name()},
                         {"trainable", model_.trainable()},
                         {"layers", layers},
                         {"input_layers", refs_json(config_.at("input_layers"), "input_layers")},
                         {"output_layers", refs_json(config_.at("output_layers"), "output_layers")}});
  }

 private:
  bool is_input(const std::string& layer) const {
    return entries_.at(layer).at("class_name").as_string() == "InputLayer";
  }

  // Functional.get_config numbers a nested functional model's calls from 1.
  Json history(const TensorRef& ref) const {
    const bool nested_functional = entries_.at(ref.layer).at("class_name").as_string() == "Functional";
    return Json::array({ref.layer, ref.node + (nested_functional ? 1 : 0), ref.tensor});
  }

  Json shape_of(const TensorRef& ref) const {
    if (is_input(ref.layer)) {
      const Json c = entries_.at(ref.layer).at("config");
      return c.contains("batch_input_shape") ? c.at("batch_input_shape") : c.get("batch_shape", Json());
    }
    return shape_json(model_.get_layer(ref.layer)->output_shape());
  }

  Json dtype_of(const TensorRef& ref) const {
    if (is_input(ref.layer)) return entries_.at(ref.layer).at("config").get("dtype", Json("float32"));
    return Json(dtype_name(model_.get_layer(ref.layer)->compute_dtype()));
  }

  Json input_shapes(const NodeCall& call) const {
    if (!call.as_list) return call.inputs.empty() ? Json() : shape_of(call.inputs[0]);
    Json shapes = Json::array();
    for (const TensorRef& in : call.inputs) shapes.push_back(shape_of(in));
    return shapes;
  }

  Json node_json(const NodeCall& call) const {
    Json tensors = Json::array();
    for (const TensorRef& in : call.inputs) {
      tensors.push_back(Json::object(
          {{"class_name", "__keras_tensor__"},
           {"config", Json::object({{"shape", shape_of(in)},
                                    {"dtype", dtype_of(in)},
                                    {"keras_history", history(in)}})}}));
    }
    // layer(x) records args = [x]; a merge layer's layer([a, b]) records args = [[a, b]].
    const Json args = call.as_list ? Json::array({tensors}) : tensors;
    return Json::object({{"args", args}, {"kwargs", Json::object()}});
  }

  // One bare [layer, node, tensor] for a single tensor (Keras 3 keeps the structure the model
  // was built with; Strata's models take one tensor or a list).
  Json refs_json(const Json& structure, const std::string& what) const {
    const std::vector<TensorRef> refs = flatten_tensor_refs(structure, what);
    if (refs.size() == 1) return history(refs[0]);
    Json out = Json::array();
    for (const TensorRef& r : refs) out.push_back(history(r));
    return out;
  }

  const Model& model_;
  Json config_;
  std::map<std::string, Json> entries_;
};

Json serialize_model(const Model& model) {
  const std::string cls = model.class_name();
  Json out;
  if (cls == "Sequential") {
    Json build_config;
    Json config = sequential_config(model, build_config);
    out = Json::object({{"module", "keras"},
                        {"class_name", "Sequential"},
                        {"config", config},
                        {"registered_name", nullptr}});
    if (!build_config.is_null()) out.set("build_config", build_config);
  } else if (cls == "Functional") {
    // Functional is not exported by Keras: serialize_keras_object names its module and
    // registers it under its class name. Its __init__ builds it with input_shape=None.
    out = Json::object({{"module", "keras.src.models.functional"},
                        {"class_name", "Functional"},
                        {"config", FunctionalConverter(model).run()},
                        {"registered_name", "Functional"},
                        {"build_config", Json::object({{"input_shape", nullptr}})}});
  } else {
    throw ValueError("save: model '" + model.name() + "' is a subclassed model, whose "
                     "architecture cannot be stored (as in Keras); save it with save_weights() "
                     "and rebuild it in code before load_weights()");
  }
  out.set("compile_config", keras3_compile_config(model));  // {} when not compiled, as Keras
  return out;
}

}  // namespace

Json keras3_model_config(const Model& model) { return serialize_model(model); }

}  // namespace strata::saving
