#include "framework/saving/training_checkpoint.h"

#include "framework/core/error.h"
#include "framework/model/model.h"
#include "framework/optimizers/optimizer.h"
#include "framework/saving/atomic_file.h"
#include "framework/saving/hdf5_file.h"
#include "framework/saving/keras_attributes.h"
#include "framework/saving/keras_weights_format.h"
#include "framework/saving/optimizer_weights_format.h"

namespace strata::saving {
namespace {
constexpr const char* kStateAttribute = "training_state";
}

void write_training_checkpoint(const Model& model, const std::string& path,
                               const std::string& state_json,
                               const std::function<void()>& before_replace) {
  write_file_atomically(path, [&](const std::string& temp) {
    hdf5::File file = hdf5::File::create(temp);
    {
      hdf5::Group root = file.root();
      root.write_string("keras_version", kKerasVersion);
      root.write_string("backend", kKerasBackend);
      root.write_string(kStateAttribute, state_json);
      hdf5::Group weights = root.create_group("model_weights");
      write_keras2_weights(weights, model);
      if (model.compiled()) {
        write_optimizer_weights(root, *model.optimizer(), model.trainable_variables());
      }
    }
    file.close();
  }, before_replace);
}

std::string read_training_checkpoint(Model& model, const std::string& path) {
  const hdf5::File file = hdf5::File::open(path);
  const hdf5::Group root = file.root();
  // The state first, each part with its own message: a damaged attribute must not read as a
  // missing group.
  if (!root.has_attribute(kStateAttribute)) {
    std::string found;
    for (const std::string& a : root.attribute_names()) found += (found.empty() ? "'" : ", '") + a + "'";
    throw ValueError("Loading: '" + path + "' is not a training checkpoint: it lacks the '" +
                     kStateAttribute + "' attribute (its root has " +
                     (found.empty() ? std::string("no attributes") : "the attributes " + found) +
                     "); it was not written by BackupAndRestore, or it is damaged");
  }
  std::string state;
  try {
    state = root.read_string(kStateAttribute);
  } catch (const Error& e) {
    throw ValueError("Loading: cannot read the '" + std::string(kStateAttribute) +
                     "' attribute of the training checkpoint '" + path + "': " + e.what());
  }
  if (!root.has_group("model_weights")) {
    throw ValueError("Loading: the training checkpoint '" + path + "' lacks the 'model_weights' "
                     "group; it was not written by BackupAndRestore, or it is damaged");
  }
  read_keras2_weights(root.open_group("model_weights"), model, WeightLoadOptions{});
  if (model.compiled() && root.has_group("optimizer_weights")) {
    read_optimizer_weights(root, *model.optimizer(), model.trainable_variables(), /*strict=*/true);
  }
  return state;
}

}  // namespace strata::saving
