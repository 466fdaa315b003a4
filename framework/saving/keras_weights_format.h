// Keras 2's HDF5 weights layout (keras/saving/legacy/hdf5_format.py), written and read with the
// same rules Keras applies, into a group that is either a weights file's root (save_weights) or
// a full-model file's /model_weights:
//
//   attrs: layer_names = every layer of model.layers() in order (weightless ones too),
//          backend = "tensorflow", keras_version = "2.15.0"
//   <layer>/                       one group per layer, attrs: weight_names = ["dense/kernel:0",
//                                  "dense/bias:0"] (trainable first, then non-trainable; an
//                                  empty float64 array for a weightless layer)
//   <layer>/dense/kernel:0         float32 (the variable's dtype) datasets at those names
//   top_level_model_weights/       weights the model owns directly (usually none)
//
// A nested model (a Model used as a layer) is one entry of layer_names; its group holds all of
// its weights under their full names.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "framework/saving/hdf5_file.h"
#include "framework/variables/variable.h"

namespace strata {
class Layer;
class Model;
}  // namespace strata

namespace strata::saving {

struct WeightLoadOptions {
  // Match layers by name (Keras' by_name) rather than the order of the layers that have weights.
  bool by_name = false;
  // Skip (with a warning on stderr) weights whose shape differs and layers whose weight count
  // differs, instead of throwing.
  bool skip_mismatch = false;
};

// The weights Keras 2 saves for a layer, in its order: trainable ones, then non-trainable.
std::vector<VariablePtr> keras2_layer_weights(const Layer& layer);

void write_keras2_weights(hdf5::Group& group, const Model& model);
// Assigns the model's weights from `group` (all or nothing: every check runs before the first
// assignment). Counts that differ are ValueErrors, shapes ShapeErrors, naming the file, the
// layer, the weight and both shapes.
void read_keras2_weights(const hdf5::Group& group, Model& model, const WeightLoadOptions& options);

}  // namespace strata::saving
