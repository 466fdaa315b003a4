// A model's config.json for a .keras file, in Keras 3's form (saving_lib._serialize_model_as_json:
// serialize_keras_object(model)), converted from Strata's get_config (Keras 2's spelling):
//
//   {"module": "keras", "class_name": "Sequential",
//    "config": {"name", "trainable", "dtype": {DTypePolicy}, "layers": [{"module":
//               "keras.layers", "class_name": "InputLayer", "config": {"batch_shape": ...}},
//               {"module": "keras.layers", "class_name": "Dense", "config": {...},
//                "registered_name": null, "build_config": {"input_shape": [null, 8]}}, ...],
//               "build_input_shape": [null, 8]},
//    "registered_name": null, "build_config": {"input_shape": [null, 8]},
//    "compile_config": {...}}
//
// A functional model is {"module": "keras.src.models.functional", "class_name": "Functional",
// ..., "registered_name": "Functional"} whose layers (in Keras 3's operation order) carry "name"
// and "inbound_nodes": [{"args": [{"class_name": "__keras_tensor__", "config": {"shape",
// "dtype", "keras_history": [layer, node, tensor]}}], "kwargs": {}}], with "input_layers" and
// "output_layers" one bare triple for a single tensor. As in Keras, a nested functional model's
// calls are numbered from 1 (its node 0 is its own construction).
#pragma once

#include "framework/config/json.h"

namespace strata {
class Model;
}

namespace strata::saving {

// ValueError for a subclassed model (no storable architecture, as in Keras).
Json keras3_model_config(const Model& model);

}  // namespace strata::saving
