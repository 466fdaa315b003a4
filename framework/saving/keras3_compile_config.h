// Keras 3's "compile_config" (Trainer.get_compile_config / compile_from_config): what compile()
// was given, stored in a .keras file's config.json:
//
//   {"optimizer": {"module": "keras.optimizers", "class_name": "Adam", "config": {...},
//                  "registered_name": null},
//    "loss": ..., "loss_weights": null, "metrics": ["accuracy"], "weighted_metrics": null,
//    "run_eagerly": false, "steps_per_execution": 1, "jit_compile": false}
//
// Keras 3's optimizer configs differ from Keras 2's: no "jit_compile"/"is_legacy_optimizer"
// (Keras 3 rejects them), "loss_scale_factor" and "gradient_accumulation_steps" added.
#pragma once

#include "framework/config/json.h"

namespace strata {
class Model;
}

namespace strata::saving {

// The compile config of `model`; {} when it is not compiled (as Keras writes).
Json keras3_compile_config(const Model& model);

// Keras 3's serialized optimizer from Strata's optimizers::serialize() (Keras 2 keys).
Json keras3_optimizer(const Json& serialized);

// Compiles `model` as a Keras 3 compile_config says (optimizer as an object or a name; losses
// and metrics as names, objects or serialized functions). False, with a warning on stderr, when
// it holds no loss (a model compiled for a custom train_step): the model stays uncompiled.
// Unknown classes are ValueErrors naming them.
bool compile_from_keras3_config(Model& model, const Json& compile_config,
                                const std::string& file);

}  // namespace strata::saving
