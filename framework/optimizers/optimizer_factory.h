// keras.optimizers.get: an optimizer with default arguments from its Keras name.
#pragma once

#include <memory>
#include <string>

#include "framework/optimizers/optimizer.h"

namespace strata::optimizers {

// "sgd", "adam", "adamw", "rmsprop", "adagrad" (any case, so class names work too); throws
// ValueError listing the valid names otherwise.
std::shared_ptr<Optimizer> get(const std::string& identifier);

// {"class_name": "Adam", "config": {...}} (Keras' serialize / the optimizer_config of a saved
// model) and back. Keys Keras writes that Strata has no use for (jit_compile, use_ema=false,
// ...) are accepted; unknown classes, or features Strata lacks (use_ema=true), are ValueErrors.
Json serialize(const Optimizer& optimizer);
std::shared_ptr<Optimizer> deserialize(const Json& config);
// Learning-rate schedules the same way ({"class_name": "ExponentialDecay", "config": {...}}).
Json serialize_schedule(const LearningRateSchedule& schedule);
std::shared_ptr<LearningRateSchedule> deserialize_schedule(const Json& config);

}  // namespace strata::optimizers
