// load_model: keras.models.load_model for Keras 3's .keras archives (config.json +
// model.weights.h5, from Model::save("m.keras") or Keras 3, also unzipped into a directory) and
// Keras' HDF5 full-model files (Model::save("m.h5"), Keras 2, Keras 3's legacy .h5). The format
// is read from the file's first bytes, not its name. Rebuilds the architecture through the layer
// registry (model_from_config), loads the weights, and, when `compile` is true and the file
// records how the model was compiled, compiles it and restores the optimizer's state (step
// count, learning rate, slots), so that fit() continues exactly where the saved training
// stopped.
//
//   model.save("model.keras");
//   std::shared_ptr<Model> again = load_model("model.keras");
//   again->fit(x, y, FitOptions().epochs(1));
//
// A missing file is an IOError; a file that is not a Keras model (a weights-only file, a zip
// without config.json, a TensorFlow SavedModel or checkpoint) a ValueError saying what it is and
// what to do; errors rebuilding the architecture (an unknown layer class) name the file.
// Optimizer state that does not fit the rebuilt optimizer is a warning on stderr and a fresh
// optimizer, as in Keras.
#pragma once

#include <memory>
#include <string>

#include "framework/model/model.h"

namespace strata {

std::shared_ptr<Model> load_model(const std::string& path, bool compile = true);

}  // namespace strata
