#include "layers/load_model.h"

#include "framework/core/error.h"
#include "framework/optimizers/optimizer.h"
#include "framework/saving/hdf5_file.h"
#include "framework/saving/keras_attributes.h"
#include "framework/saving/keras_weights_format.h"
#include "framework/saving/optimizer_weights_format.h"
#include "framework/saving/training_config.h"
#include "layers/model_serialization.h"

namespace strata {

std::shared_ptr<Model> load_model(const std::string& path, bool compile) {
  const saving::hdf5::File file = saving::hdf5::File::open(path);
  const saving::hdf5::Group root = file.root();
  if (!root.has_attribute("model_config")) {
    throw ValueError("load_model: '" + path + "' has no 'model_config' attribute, so it holds no "
                     "architecture (a weights-only file from save_weights(), or not a Keras model "
                     "file); build the model in code and call load_weights() instead");
  }
  std::shared_ptr<Model> model = model_from_json(root.read_string("model_config"));
  saving::read_keras2_weights(root.open_group("model_weights"), *model, saving::WeightLoadOptions{});
  if (!compile) return model;
  if (!root.has_attribute("training_config")) {
    saving::warn("No training configuration found in '" + path +
                 "', so the model was *not* compiled. Compile it manually.");
    return model;
  }
  saving::compile_from_training_config(*model, Json::parse(root.read_string("training_config")));
  if (root.has_group("optimizer_weights")) {
    saving::read_optimizer_weights(root, *model->optimizer(), model->trainable_variables(),
                                   /*strict=*/false);
  }
  return model;
}

}  // namespace strata
