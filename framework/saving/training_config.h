// Keras' `training_config`: what compile() was given, as the JSON Keras stores in a saved
// model's root attribute of that name, and back:
//   {"loss": "sparse_categorical_crossentropy", "metrics": [["accuracy"]],
//    "weighted_metrics": null, "loss_weights": null,
//    "optimizer_config": {"class_name": "Adam", "config": {"name": "Adam", "learning_rate": ...}}}
#pragma once

#include "framework/config/json.h"

namespace strata {
class Model;
}

namespace strata::saving {

// The training config of a compiled model (ValueError when it is not compiled).
Json training_config(const Model& model);
// Compiles `model` as the config says. Unknown losses, metrics or optimizer classes are a
// ValueError naming them.
void compile_from_training_config(Model& model, const Json& config);

}  // namespace strata::saving
