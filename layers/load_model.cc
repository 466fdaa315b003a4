#include "layers/load_model.h"

#include "framework/core/error.h"
#include "framework/optimizers/optimizer.h"
#include "framework/saving/file_format.h"
#include "framework/saving/hdf5_file.h"
#include "framework/saving/keras3_compile_config.h"
#include "framework/saving/keras3_optimizer_format.h"
#include "framework/saving/keras3_weights_format.h"
#include "framework/saving/keras_archive.h"
#include "framework/saving/keras_attributes.h"
#include "framework/saving/keras_weights_format.h"
#include "framework/saving/optimizer_weights_format.h"
#include "framework/saving/training_config.h"
#include "layers/keras_assets.h"
#include "layers/model_serialization.h"

namespace strata {
namespace {

// The same error type, its message prefixed with the file it came from.
template <typename E>
[[noreturn]] void rethrow_naming(const E& e, const std::string& path) {
  throw E("load_model('" + path + "'): " + e.what());
}

// Rebuilds the architecture; errors (an unknown layer class, say) name the file.
std::shared_ptr<Model> model_from_file_config(const Json& config, const std::string& path) {
  try {
    return model_from_config(config);
  } catch (const ShapeError& e) {
    rethrow_naming(e, path);
  } catch (const DTypeError& e) {
    rethrow_naming(e, path);
  } catch (const StateError& e) {
    rethrow_naming(e, path);
  } catch (const ValueError& e) {
    rethrow_naming(e, path);
  }
}

// Keras' HDF5 full-model file (Keras 2, Keras 3's legacy .h5, or Model::save("m.h5")).
std::shared_ptr<Model> load_h5_model(const std::string& path, bool compile) {
  const saving::hdf5::File file = saving::hdf5::File::open(path);
  const saving::hdf5::Group root = file.root();
  if (!root.has_attribute("model_config")) {
    throw ValueError("load_model: '" + path + "' has no 'model_config' attribute, so it holds no "
                     "architecture (a weights-only file from save_weights(), or not a Keras model "
                     "file); build the model in code and call load_weights() instead");
  }
  std::shared_ptr<Model> model =
      model_from_file_config(Json::parse(root.read_string("model_config")), path);
  saving::read_keras2_weights(root.open_group("model_weights"), *model, saving::WeightLoadOptions{});
  if (!compile) return model;
  if (!root.has_attribute("training_config")) {
    saving::warn("No training configuration found in '" + path +
                 "', so the model was *not* compiled. Compile it manually.");
    return model;
  }
  saving::compile_from_training_config(*model, Json::parse(root.read_string("training_config")));
  if (root.has_group("optimizer_weights")) {
    const std::vector<VariablePtr> keras3_order = saving::keras3_trainable_variables(*model);
    saving::read_optimizer_weights(root, *model->optimizer(), model->trainable_variables(),
                                   /*strict=*/false, &keras3_order);
  }
  return model;
}

// Keras 3's .keras archive (or the directory Keras 3 saves with zipped=False).
std::shared_ptr<Model> load_keras_archive(const std::string& path, bool compile) {
  const saving::KerasArchive archive = saving::KerasArchive::open(path);
  const Json config = archive.config();
  std::shared_ptr<Model> model = model_from_file_config(config, path);
  const saving::hdf5::File weights = archive.weights();
  const saving::hdf5::Group root = weights.root();
  saving::read_keras3_weights(root, *model, /*skip_mismatch=*/false);
  load_lookup_assets(archive, *model);
  // Keras writes "compile_config": {} for a model saved uncompiled, and says nothing.
  const Json compile_config = config.get("compile_config", Json());
  if (!compile || !compile_config.is_object() || compile_config.keys().empty()) return model;
  if (!saving::compile_from_keras3_config(*model, compile_config, path)) return model;
  saving::read_keras3_optimizer(root, *model->optimizer(),
                                saving::keras3_trainable_variables(*model));
  return model;
}

}  // namespace

std::shared_ptr<Model> load_model(const std::string& path, bool compile) {
  // The format is read from the file, not from its name.
  const saving::FileFormat format = saving::detect_file_format(path);
  switch (format) {
    case saving::FileFormat::kHdf5:
      return load_h5_model(path, compile);
    case saving::FileFormat::kZip:
    case saving::FileFormat::kKerasDirectory:
      return load_keras_archive(path, compile);
    default:
      saving::throw_unsupported_format("load_model", path, format);
  }
}

}  // namespace strata
