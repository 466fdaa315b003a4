// keras.losses.get: a loss object with default arguments from a Keras name.
#pragma once

#include <memory>
#include <string>

#include "framework/losses/loss.h"

namespace strata::losses {

// Function names ("sparse_categorical_crossentropy", "mean_squared_error", "huber", ...), class
// names ("SparseCategoricalCrossentropy", "MeanSquaredError", "Huber", ...) and Keras's aliases
// ("mse", "MSE", "mae", "MAE", "huber_loss"). Throws ValueError listing the valid names.
std::shared_ptr<Loss> get(const std::string& identifier);

// Keras' serialize / deserialize: {"class_name": "SparseCategoricalCrossentropy", "config":
// {"reduction": ..., "name": ..., "from_logits": true, ...}}. deserialize also takes a plain
// name string (what compile("...") stores).
Json serialize(const Loss& loss);
std::shared_ptr<Loss> deserialize(const Json& config);

}  // namespace strata::losses
