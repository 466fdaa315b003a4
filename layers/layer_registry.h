// The layer registry: Keras class name -> factory from a Keras config. Used by model_from_json,
// load_model and Sequential/Functional from_config.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "framework/config/json.h"
#include "framework/model/layer.h"

namespace strata {

using LayerFactory = std::function<std::shared_ptr<Layer>(const Json& config)>;

// Adds (or replaces) a class, e.g. a user's custom layer: register_layer("MyLayer", factory).
void register_layer(const std::string& class_name, LayerFactory factory);
// Every registered class name, sorted.
std::vector<std::string> registered_layers();
// {"class_name": "Dense", "config": {...}} -> a new layer; ValueError naming the class, the
// layer's name, the fix (register_layer) and the registered classes when the class is unknown.
std::shared_ptr<Layer> layer_from_config(const Json& layer_json);
// {"class_name": ..., "config": layer.get_config()}
Json layer_to_json(const Layer& layer);

}  // namespace strata
