#include "layers/model_serialization.h"

#include "framework/model/sequential.h"
#include "layers/functional_from_config.h"
#include "layers/layer_registry.h"

namespace strata {
namespace {

Shape shape_from_json(const Json& j) {
  std::vector<int64_t> dims;
  for (size_t i = 0; i < j.size(); ++i) dims.push_back(j.at(i).is_null() ? -1 : j.at(i).as_int());
  return Shape(dims);
}

// The batch shape a Sequential config was built with: its InputLayer's (batch_input_shape in
// Keras 2, batch_shape in Keras 3), Keras 3's "build_input_shape", a Keras 2 first layer's
// batch_input_shape, or the outer build_config's input_shape. Null when unbuilt.
Json sequential_input_shape(const Json& model_json, const Json& config) {
  const Json layers = config.at("layers");
  for (size_t i = 0; i < layers.size(); ++i) {
    const Json c = layers.at(i).get("config", Json::object());
    if (layers.at(i).at("class_name").as_string() == "InputLayer") {
      return c.contains("batch_input_shape") ? c.at("batch_input_shape")
                                             : c.get("batch_shape", Json());
    }
  }
  const Json build_input_shape = config.get("build_input_shape", Json());
  if (build_input_shape.is_array()) return build_input_shape;
  if (layers.size() > 0) {
    const Json first = layers.at(size_t(0)).get("config", Json::object());
    if (first.get("batch_input_shape", Json()).is_array()) return first.at("batch_input_shape");
  }
  return model_json.get("build_config", Json::object()).get("input_shape", Json());
}

std::shared_ptr<Model> sequential_from_config(const Json& model_json, const Json& config) {
  const Json layers = config.at("layers");
  if (!layers.is_array()) {  // Keras fails on a null list too
    throw ValueError("model_from_json: a Sequential config's \"layers\" must be a list of layer "
                     "configs, got " + layers.dump().substr(0, 80));
  }
  auto model = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{},
                                            config.get("name", Json("")).as_string());
  for (size_t i = 0; i < layers.size(); ++i) {
    const Json l = layers.at(i);
    if (l.at("class_name").as_string() == "InputLayer") continue;
    model->add(layer_from_config(l));
  }
  const Json input_shape = sequential_input_shape(model_json, config);
  if (input_shape.is_array() && input_shape.size() > 0 && !model->layers().empty()) {
    model->build(shape_from_json(input_shape));
  }
  const Json trainable = config.get("trainable", Json(true));
  if (trainable.is_bool() && !trainable.as_bool()) model->set_trainable(false);
  return model;
}

}  // namespace

std::shared_ptr<Model> model_from_config(const Json& model_json) {
  if (!model_json.is_object() || !model_json.contains("class_name")) {
    throw ValueError("model_from_json: expected {\"class_name\": \"Sequential\" | \"Functional\", "
                     "\"config\": {...}}, got " + model_json.dump().substr(0, 200));
  }
  const std::string cls = model_json.at("class_name").as_string();
  const Json config = model_json.at("config");
  if (cls == "Sequential") return sequential_from_config(model_json, config);
  if (cls == "Functional" || cls == "Model") {
    if (!config.contains("layers")) {
      throw ValueError("model_from_json: a subclassed model's config holds no architecture; "
                       "construct the class in code and load its weights instead");
    }
    return functional_from_config(config);
  }
  throw ValueError("model_from_json: unknown model class '" + cls +
                   "'; expected Sequential or Functional");
}

std::shared_ptr<Model> model_from_json(const std::string& json) {
  return model_from_config(Json::parse(json));
}

}  // namespace strata
