// Rebuilding models from Keras JSON (model.to_json(), the model_config of an .h5 file, the
// config.json of a .keras file), through the layer registry.
#pragma once

#include <memory>
#include <string>

#include "framework/config/json.h"
#include "framework/model/model.h"

namespace strata {

// keras.models.model_from_json: {"class_name": "Sequential" | "Functional" | "Model", "config":
// ...} in Keras 2's spelling or Keras 3's (with "module", "registered_name", "build_config",
// DTypePolicy objects, InputLayer "batch_shape", {"args", "kwargs"} inbound nodes of
// "__keras_tensor__"s). Layers come from the registry (register_layer for custom ones).
// Weights are new; a "compile_config" is ignored (load_model compiles).
std::shared_ptr<Model> model_from_json(const std::string& json);
std::shared_ptr<Model> model_from_config(const Json& model_json);

}  // namespace strata
