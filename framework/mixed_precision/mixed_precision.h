// Mixed precision (keras.mixed_precision): dtype policies, the global policy, autocasting of
// variable reads, and dynamic loss scaling.
//
//   mixed_precision::set_global_policy("mixed_bfloat16");  // or "mixed_float16"
//   auto model = build_model();   // layers compute in 16 bits, keep float32 weights
//   model->compile("adam", "sparse_categorical_crossentropy", {"accuracy"});
//   model->fit(x, y);             // float16: compile() added a LossScaleOptimizer
#pragma once

#include "framework/mixed_precision/autocast.h"
#include "framework/mixed_precision/dtype_policy.h"
#include "framework/mixed_precision/global_policy.h"
#include "framework/optimizers/loss_scale_optimizer.h"

namespace strata::mixed_precision {
// Keras also exports the optimizer as keras.mixed_precision.LossScaleOptimizer.
using optimizers::LossScaleOptimizer;
using optimizers::LossScaleOptimizerOptions;
}  // namespace strata::mixed_precision
