// An optimizer's state as Keras 3 keeps it (BaseOptimizer.variables, keras/src/optimizers/
// base_optimizer.py): unlike Keras 2, the step counter AND the learning rate are variables.
//
//   0  iteration        int64 scalar ("int": int64 with TensorFlow, int32 with JAX)
//   1  learning_rate    float32 scalar (absent when the learning rate is a schedule)
//   2+ the slots, one group at a time in the order build() adds them
//      (add_optimizer_variables interleaves the names of one call per model variable):
//        SGD      momentum (only when momentum > 0)
//        Adam(W)  momentum, velocity per variable; then velocity_hat per variable (amsgrad)
//        RMSprop  velocity per variable; then momentum (momentum > 0); then average_gradient
//                 (centered)
//        Adagrad  accumulator
//      over the model's trainable variables in Keras 3's order (keras3_trainable_variables).
//   LossScaleOptimizer: its own iteration and learning_rate (unused, 0), step_counter,
//      dynamic_scale, then the inner optimizer's variables.
//
// A .keras file stores them as optimizer/vars/0, 1, ... (and the inner optimizer's again as
// optimizer/inner_optimizer/vars/...); Keras 3's legacy .h5 as /optimizer_weights datasets named
// by variable path ("adam/iteration", "adam/dense_kernel_momentum").
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "framework/saving/hdf5_file.h"
#include "framework/variables/variable.h"

namespace strata::optimizers {
class Optimizer;
}

namespace strata::saving {

// One Keras 3 optimizer variable, mapped onto Strata's optimizer.
struct Keras3OptimizerVariable {
  std::string path;  // Keras 3's variable path: "adam/iteration", "adam/dense_kernel_momentum"
  std::string kind;  // what its path ends with: "iteration", "learning_rate", "momentum", ...
  Shape shape;
  DType dtype;                                  // how it is stored and read
  std::function<Tensor()> value;                // what to save
  std::function<void(const Tensor&)> restore;   // what loading does with it
};

// Builds the slots of `trainable` (Keras 3's model.trainable_variables order) and lists the
// optimizer's variables as Keras 3 has them. ValueError for an optimizer class Keras 3 does not
// have.
std::vector<Keras3OptimizerVariable> keras3_optimizer_variables(
    optimizers::Optimizer& optimizer, const std::vector<VariablePtr>& trainable);

// Writes root/optimizer/vars (and root/optimizer/inner_optimizer/vars for a
// LossScaleOptimizer), each with Keras' "name" attribute.
void write_keras3_optimizer(hdf5::Group& root, optimizers::Optimizer& optimizer,
                            const std::vector<VariablePtr>& trainable);

// One saved value as a reader found it: a label for messages (the dataset's path) and, for
// files that name their variables, the name to check the kind against.
struct SavedOptimizerValue {
  std::string label;
  std::string name;  // empty: unnamed (.keras stores by index)
  Shape shape;
  std::function<Tensor(DType)> read;
};

// Restores `optimizer` from `saved` (every check first: all or nothing). Returns what
// disagrees (the count, a named kind or a shape, naming `file`), with nothing assigned, or ""
// when the state was restored.
std::string restore_keras3_optimizer(optimizers::Optimizer& optimizer,
                                     const std::vector<VariablePtr>& trainable,
                                     const std::vector<SavedOptimizerValue>& saved,
                                     const std::string& file);

// Restores from root/optimizer/vars of a Keras 3 weights file; when it does not fit, Keras'
// warning on stderr and a fresh optimizer (false). False too when the file has no optimizer
// state.
bool read_keras3_optimizer(const hdf5::Group& root, optimizers::Optimizer& optimizer,
                           const std::vector<VariablePtr>& trainable);

}  // namespace strata::saving
