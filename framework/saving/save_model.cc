// save_model (Model::save forwards here): the whole model in Keras 2's HDF5 layout
// (save_model_to_hdf5), or in Keras 3's .keras archive for a path ending in ".keras"
// (keras_archive.h); reloaded with load_model() (layers/load_model.h). The HDF5 layout:
//
//   attrs: keras_version, backend,
//          model_config = {"class_name": "Sequential" | "Functional", "config": ...} (JSON),
//          training_config = what compile() was given (JSON; only when compiled)
//   /model_weights/...       the weights layout of save_weights (keras_weights_format.h)
//   /optimizer_weights/...   the optimizer's variables (optimizer_weights_format.h; compiled only)
#include "framework/saving/save_model.h"

#include "framework/core/error.h"
#include "framework/model/model.h"
#include "framework/optimizers/optimizer.h"
#include "framework/saving/atomic_file.h"
#include "framework/saving/hdf5_file.h"
#include "framework/saving/keras_archive.h"
#include "framework/saving/keras_attributes.h"
#include "framework/saving/keras_weights_format.h"
#include "framework/saving/optimizer_weights_format.h"
#include "framework/saving/training_config.h"

namespace strata {

void save_model(const Model& model, const std::string& path) {
  // Model::graph() is protected; Model befriends this function for this one check. class_name()
  // alone would not do: a subclass may override it, and what cannot be stored is a model that
  // has no functional graph and is not a Sequential.
  if (model.graph() == nullptr && model.class_name() != "Sequential") {
    throw ValueError("save('" + path + "'): model '" + model.name() + "' is a subclassed model, "
                     "whose architecture cannot be stored (as in Keras); save it with "
                     "save_weights() and rebuild it in code before load_weights()");
  }
  if (!model.built() && model.weights().empty()) {
    throw ValueError("save('" + path + "'): model '" + model.name() + "' has not been built; "
                     "call it on a batch, fit() it or build() it first");
  }
  if (saving::is_keras_archive_path(path)) {
    saving::save_keras_archive(model, path);
    return;
  }
  const std::string model_config =
      Json::object({{"class_name", model.class_name()}, {"config", model.get_config()}}).dump();
  const std::string training_config =
      model.compiled() ? saving::training_config(model).dump() : "";

  saving::write_file_atomically(path, [&](const std::string& temp) {
    saving::hdf5::File file = saving::hdf5::File::create(temp);
    {
      saving::hdf5::Group root = file.root();
      root.write_string("keras_version", saving::kKerasVersion);
      root.write_string("backend", saving::kKerasBackend);
      root.write_string("model_config", model_config);
      if (model.compiled()) root.write_string("training_config", training_config);
      saving::hdf5::Group weights = root.create_group("model_weights");
      saving::write_keras2_weights(weights, model);
      if (model.compiled()) {
        saving::write_optimizer_weights(root, *model.optimizer(), model.trainable_variables());
      }
    }
    file.close();
  });
}

}  // namespace strata
