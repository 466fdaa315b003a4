// Keras 3's weights file (model.save_weights("x.weights.h5"): saving_lib's H5IOStore), chosen by
// the ".weights.h5" suffix. Every saveable gets a "vars" group holding its own variables as
// datasets "0", "1", ... (trainable first, then non-trainable); a model's layers sit below
// "layers/", keyed NOT by layer name but by the snake_case class name with a per-class counter,
// in model.layers() order, as Keras 3's _save_container_state does:
//
//   /vars                                    the model's own variables (normally none)
//   /layers/dense/vars/0, /1                 first Dense: kernel, bias
//   /layers/dense_1/vars/0, /1               second Dense
//   /layers/batch_normalization/vars/0..3    gamma, beta, moving_mean, moving_variance
//   /layers/sequential/vars                  a nested model ...
//   /layers/sequential/layers/dense/vars/0   ... and its layers, recursively
//
// Keras 3.0-3.8 write an empty "vars" group for weightless saveables too; so do we. Keras 2.13's
// "_layer_checkpoint_dependencies" spelling of "layers" is read as well. Optimizer and metric
// variables are not written (Keras 3 warns and keeps a fresh optimizer when they are absent).
// A layer that is not a model stores all its weights (sub-layers' included) in its own "vars".
#pragma once

#include <string>

#include "framework/saving/hdf5_file.h"

namespace strata {
class Model;
}

namespace strata::saving {

// True when `path` names a Keras 3 weights file (ends in ".weights.h5").
bool is_keras3_weights_path(const std::string& path);
// True when the root of an open file has Keras 3's structure (no Keras 2 "layer_names").
bool has_keras3_layout(const hdf5::Group& root);

void write_keras3_weights(hdf5::Group& root, const Model& model);
// Assigns the model's weights (all or nothing). A variable count or shape that differs is a
// ValueError / ShapeError naming the file, layer, weight and shapes, or with skip_mismatch a
// warning on stderr and the weight left as it is.
void read_keras3_weights(const hdf5::Group& root, Model& model, bool skip_mismatch);

}  // namespace strata::saving
