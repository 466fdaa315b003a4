// Model::save: the whole model in Keras 2's HDF5 layout (save_model_to_hdf5), or in Keras 3's
// .keras archive for a path ending in ".keras" (keras_archive.h); reloaded with load_model()
// (layers/load_model.h). The HDF5 layout:
//
//   attrs: keras_version, backend,
//          model_config = {"class_name": "Sequential" | "Functional", "config": ...} (JSON),
//          training_config = what compile() was given (JSON; only when compiled)
//   /model_weights/...       the weights layout of save_weights (keras_weights_format.h)
//   /optimizer_weights/...   the optimizer's variables (optimizer_weights_format.h; compiled only)
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

void Model::save(const std::string& path) const {
  if (graph() == nullptr && class_name() != "Sequential") {
    throw ValueError("save('" + path + "'): model '" + name() + "' is a subclassed model, whose "
                     "architecture cannot be stored (as in Keras); save it with save_weights() "
                     "and rebuild it in code before load_weights()");
  }
  if (!built() && weights().empty()) {
    throw ValueError("save('" + path + "'): model '" + name() + "' has not been built; call it "
                     "on a batch, fit() it or build() it first");
  }
  if (saving::is_keras_archive_path(path)) {
    saving::save_keras_archive(*this, path);
    return;
  }
  const std::string model_config =
      Json::object({{"class_name", class_name()}, {"config", get_config()}}).dump();
  const std::string training_config = compiled() ? saving::training_config(*this).dump() : "";

  saving::write_file_atomically(path, [&](const std::string& temp) {
    saving::hdf5::File file = saving::hdf5::File::create(temp);
    {
      saving::hdf5::Group root = file.root();
      root.write_string("keras_version", saving::kKerasVersion);
      root.write_string("backend", saving::kKerasBackend);
      root.write_string("model_config", model_config);
      if (compiled()) root.write_string("training_config", training_config);
      saving::hdf5::Group weights = root.create_group("model_weights");
      saving::write_keras2_weights(weights, *this);
      if (compiled()) saving::write_optimizer_weights(root, *optimizer(), trainable_variables());
    }
    file.close();
  });
}

}  // namespace strata
