// load_model: keras.models.load_model for Keras 2's HDF5 full-model files (Model::save, or
// model.save("x.h5") in Keras 2). Rebuilds the architecture from the model_config attribute
// through the layer registry (model_from_json), loads the weights, and, when `compile` is true
// and the file has a training_config, compiles the model as it was and restores the optimizer's
// state, so that fit() continues exactly where the saved training stopped.
//
//   model.save("model.h5");
//   std::shared_ptr<Model> again = load_model("model.h5");
//   again->fit(x, y, FitOptions().epochs(1));
//
// A missing file is an IOError; a file that is not HDF5 or not a Keras model file (a weights-only
// file, say) a ValueError saying so; optimizer state that does not fit the rebuilt optimizer a
// warning on stderr and a fresh optimizer, as in Keras.
#pragma once

#include <memory>
#include <string>

#include "framework/model/model.h"

namespace strata {

std::shared_ptr<Model> load_model(const std::string& path, bool compile = true);

}  // namespace strata
