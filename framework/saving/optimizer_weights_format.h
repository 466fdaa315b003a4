// Keras 2's optimizer state in a full-model file (save_optimizer_weights_to_hdf5_group):
//
//   /optimizer_weights              attrs: weight_names = ["Adam/iter:0",
//                                          "Adam/dense/kernel/m:0", "Adam/dense/kernel/v:0", ...]
//   /optimizer_weights/Adam/iter:0             int64 scalar: the step counter
//   /optimizer_weights/Adam/dense/kernel/m:0   float32, the shape of dense/kernel
//
// in Optimizer::variables() order (the counter, then every slot in creation order). Restoring is
// by order, as Keras' optimizer.set_weights: the slots of `trainable` are built first, so a
// freshly compiled model's optimizer has the same variables in the same order as the saved one.
#pragma once

#include <vector>

#include "framework/saving/hdf5_file.h"
#include "framework/variables/variable.h"

namespace strata::optimizers {
class Optimizer;
}

namespace strata::saving {

// Builds the slots of `trainable` (if missing) and writes /optimizer_weights below `root`.
void write_optimizer_weights(hdf5::Group& root, optimizers::Optimizer& optimizer,
                             const std::vector<VariablePtr>& trainable);

// Restores `optimizer` from root's /optimizer_weights after building the slots of `trainable`.
// When the saved count, kinds of variable (the last name component: "iter", "m", "v", ...) or
// shapes disagree with the optimizer's: with `strict`, a ValueError / ShapeError naming the
// file, the variable and the shapes; otherwise Keras' warning on stderr, nothing assigned (a
// fresh optimizer), and false returned.
//
// A file written by Keras 3's legacy .h5 saving names its variables by Keras 3 path
// ("adam/iteration", "adam/learning_rate", "adam/dense_kernel_momentum") and lists Keras 3's
// optimizer.variables (keras3_optimizer_format.h): the step count, the learning rate and the
// slots are restored from it, the slots matched to `keras3_trainable` (Keras 3's order of the
// model's trainable variables; `trainable` when null).
bool read_optimizer_weights(const hdf5::Group& root, optimizers::Optimizer& optimizer,
                            const std::vector<VariablePtr>& trainable, bool strict,
                            const std::vector<VariablePtr>* keras3_trainable = nullptr);

}  // namespace strata::saving
