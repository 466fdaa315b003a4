// Rebuilding models from Keras JSON (model.to_json()), through the layer registry.
#pragma once

#include <memory>
#include <string>

#include "framework/config/json.h"
#include "framework/model/model.h"

namespace strata {

// keras.models.model_from_json: {"class_name": "Sequential" | "Functional" | "Model", "config":
// ...}. Layers come from the registry (register_layer for custom ones). Weights are new.
std::shared_ptr<Model> model_from_json(const std::string& json);
std::shared_ptr<Model> model_from_config(const Json& model_json);

}  // namespace strata
