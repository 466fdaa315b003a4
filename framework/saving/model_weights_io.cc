// save_weights / load_weights (Model's members of those names forward here): Keras 2's weights
// layout (keras_weights_format.h), or Keras 3's for a ".weights.h5" path
// (keras3_weights_format.h), written atomically. Loading reads the format from the file's first
// bytes: HDF5 (either layout, or a full-model .h5) or a .keras archive (its model.weights.h5, as
// Keras 3's load_weights does).
#include "framework/saving/save_model.h"

#include "framework/core/error.h"
#include "framework/model/model.h"
#include "framework/saving/atomic_file.h"
#include "framework/saving/file_format.h"
#include "framework/saving/hdf5_file.h"
#include "framework/saving/keras3_weights_format.h"
#include "framework/saving/keras_archive.h"
#include "framework/saving/keras_attributes.h"
#include "framework/saving/keras_weights_format.h"

namespace strata {

void save_weights(const Model& model, const std::string& path) {
  if (!model.built() && model.weights().empty()) {
    throw ValueError("save_weights: model '" + model.name() + "' has not been built, so it has "
                     "no weights yet; call it on a batch, fit() it or build() it first");
  }
  if (saving::is_keras_archive_path(path)) {
    throw ValueError("save_weights('" + path + "'): a .keras file holds a whole model; save it "
                     "with save('" + path + "'), or give save_weights() a path ending in "
                     "'.weights.h5' (Keras 3's weights file) or '.h5' (Keras 2's)");
  }
  const bool keras3 = saving::is_keras3_weights_path(path);
  saving::write_file_atomically(path, [&](const std::string& temp) {
    saving::hdf5::File file = saving::hdf5::File::create(temp);
    {
      saving::hdf5::Group root = file.root();
      if (keras3) {
        saving::write_keras3_weights(root, model);
      } else {
        saving::write_keras2_weights(root, model);
      }
    }
    file.close();
  });
}

namespace {

void require_by_order(const std::string& path, bool by_name, const char* what) {
  if (by_name) {
    throw ValueError("load_weights('" + path + "'): by_name=true needs a Keras 2 weights file; "
                     "this is " + std::string(what) + ", whose layers are matched by position "
                     "in model.layers(); load it with by_name=false");
  }
}

}  // namespace

void load_weights(Model& model, const std::string& path, bool by_name, bool skip_mismatch) {
  const saving::FileFormat format = saving::detect_file_format(path);
  if (format == saving::FileFormat::kZip || format == saving::FileFormat::kKerasDirectory) {
    const saving::hdf5::File weights = saving::KerasArchive::open(path).weights();
    require_by_order(path, by_name, "a Keras 3 .keras archive");
    saving::read_keras3_weights(weights.root(), model, skip_mismatch);
    return;
  }
  if (format != saving::FileFormat::kHdf5) {
    saving::throw_unsupported_format("load_weights", path, format);
  }
  const saving::hdf5::File file = saving::hdf5::File::open(path);
  const saving::hdf5::Group root = file.root();
  const saving::WeightLoadOptions options{by_name, skip_mismatch};
  // The layout is read from the contents, whatever the file is called.
  if (saving::has_string_list_attribute(root, "layer_names")) {
    saving::read_keras2_weights(root, model, options);
  } else if (root.has_group("model_weights")) {  // a full model saved with save()
    saving::read_keras2_weights(root.open_group("model_weights"), model, options);
  } else if (saving::has_keras3_layout(root)) {
    require_by_order(path, by_name, "a Keras 3 .weights.h5 file");
    saving::read_keras3_weights(root, model, skip_mismatch);
  } else {
    throw ValueError("load_weights: '" + path + "' is an HDF5 file but not a Keras weights file: "
                     "it has no 'layer_names' attribute (Keras 2 weights), no 'model_weights' "
                     "group (Keras 2 full model) and no 'layers'/'vars' groups (Keras 3 "
                     ".weights.h5); pass a file written by save_weights()/save() or by Keras");
  }
}

}  // namespace strata
