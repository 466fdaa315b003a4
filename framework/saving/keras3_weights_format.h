// Keras 3's weights layout (saving_lib's H5IOStore): model.save_weights("x.weights.h5"), chosen
// by the ".weights.h5" suffix, and the model.weights.h5 inside a .keras archive. Every saveable
// gets a "vars" group holding its own variables as datasets "0", "1", ... (trainable first, then
// non-trainable), with a "name" attribute (Keras >= 3.6: the layer's name); a model's layers sit
// below "layers/", keyed NOT by layer name but by the snake_case class name with a per-class
// counter, in the order of Keras 3's model.layers, as _save_container_state does:
//
//   /vars                                    the model's own variables (normally none)
//   /layers/input_layer/vars                 a functional model's Input (Keras lists it)
//   /layers/dense/vars/0, /1                 first Dense: kernel, bias
//   /layers/dense_1/vars/0, /1               second Dense
//   /layers/batch_normalization/vars/0..3    gamma, beta, moving_mean, moving_variance
//   /layers/sequential/vars                  a nested model ...
//   /layers/sequential/layers/dense/vars/0   ... and its layers, recursively
//   /optimizer/vars/0..n                     (.keras only; keras3_optimizer_format.h)
//
// Keras 3's order of a functional model's layers is its graph order (functional_config.h), which
// can differ from Strata's layers() for branching graphs; Sequential keeps the order of add().
// Weightless saveables get an empty "vars" group too, as Keras writes. Keras 2.13's
// "_layer_checkpoint_dependencies" spelling of "layers" is read as well. A layer that is not a
// model stores all its weights (sub-layers' included) in its own "vars".
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

// True when `path` names a Keras 3 weights file (ends in ".weights.h5").
bool is_keras3_weights_path(const std::string& path);
// True when the root of an open file has Keras 3's structure (no Keras 2 "layer_names").
bool has_keras3_layout(const hdf5::Group& root);

// A model's layers under their Keras 3 keys, in Keras 3's order; `layer` is null for a
// functional model's InputLayers (which own nothing).
struct Keras3Layer {
  std::string key;   // "dense", "dense_1", "input_layer", ...
  std::string name;  // the layer's own name
  std::shared_ptr<Layer> layer;
};
std::vector<Keras3Layer> keras3_layers(const Model& model);
// Keras 3's model.trainable_variables: the model's own, then each layer's in keras3_layers()
// order (nested models recursively): the order of a Keras 3 optimizer's slots.
std::vector<VariablePtr> keras3_trainable_variables(const Model& model);

void write_keras3_weights(hdf5::Group& root, const Model& model);
// Assigns the model's weights (all or nothing). A variable count or shape that differs is a
// ValueError / ShapeError naming the file, layer, weight and shapes, or with skip_mismatch a
// warning on stderr and the weight left as it is.
void read_keras3_weights(const hdf5::Group& root, Model& model, bool skip_mismatch);

}  // namespace strata::saving
