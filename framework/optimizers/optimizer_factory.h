// keras.optimizers.get: an optimizer with default arguments from its Keras name.
#pragma once

#include <memory>
#include <string>

#include "framework/optimizers/optimizer.h"

namespace strata::optimizers {

// "sgd", "adam", "adamw", "rmsprop", "adagrad" (any case, so class names work too); throws
// ValueError listing the valid names otherwise.
std::shared_ptr<Optimizer> get(const std::string& identifier);

}  // namespace strata::optimizers
