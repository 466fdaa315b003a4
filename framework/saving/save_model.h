// Saving as free functions, Keras 3's spelling: keras.saving.save_model(model, filepath),
// save_weights / load_weights (Keras' model.save_weights / model.load_weights). Model's save(),
// save_weights() and load_weights() are one-line forwards to these, so either form does the same
// thing and writes the same file:
//
//   save_model(model, "m.keras");          // model.save("m.keras")
//   save_weights(model, "w.weights.h5");   // model.save_weights("w.weights.h5")
//   load_weights(model, "w.weights.h5");   // model.load_weights("w.weights.h5")
//   std::shared_ptr<Model> again = load_model("m.keras");
//
// load_model (keras.saving.load_model) lives in layers/load_model.h: it rebuilds the architecture
// through the layer registry in layers/, which framework/ must not depend on. Error messages name
// the member forms (save('m.h5'), save_weights, load_weights) whichever form was called.
#pragma once

#include <string>

namespace strata {

class Model;

// The whole model: Keras 3's .keras archive when `path` ends in ".keras" (config.json,
// model.weights.h5 with the optimizer's state), else Keras 2's HDF5 layout (model_config,
// training_config, model_weights/, optimizer_weights/). Atomic like save_weights. A subclassed
// model (no functional graph, not Sequential) or one not built yet is a ValueError, as in Keras:
// its architecture cannot be stored. Reload with load_model() (layers/load_model.h).
void save_model(const Model& model, const std::string& path);

// Keras 2's weights file (root attribute layer_names, <layer>/<layer>/<weight>:0 datasets), or
// Keras 3's layout when `path` ends in ".weights.h5" (a ".keras" path is a ValueError: use
// save_model()). The write is atomic: a temporary file in the same directory, flushed, fsync'ed
// and renamed over `path`.
void save_weights(const Model& model, const std::string& path);

// Reads either layout, full-model files and the weights of a .keras archive (the format is read
// from the file, not its name). by_name matches layers by name instead of order (Keras 2 layouts
// only); skip_mismatch skips weights whose shape differs instead of throwing. A missing file is
// an IOError naming it.
void load_weights(Model& model, const std::string& path, bool by_name = false,
                  bool skip_mismatch = false);

}  // namespace strata
