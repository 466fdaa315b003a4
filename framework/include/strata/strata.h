// Strata: a Keras-style deep-learning training framework in C++.
//
//   #include <strata/strata.h>
//   using namespace strata;
//
//   set_random_seed(42);
//   Tensor x = random_normal({256, 8});
//   Tensor y = reduce_sum(x, {1}, /*keepdims=*/true);
//
//   Sequential model({std::make_shared<Dense>(16, "relu"), std::make_shared<Dense>(1)});
//   optimizers::Adam optimizer(1e-2);
//   losses::MeanSquaredError mse;
//   for (int step = 0; step < 200; ++step) {
//     GradientTape tape;
//     Tensor loss = mse(y, model(x, /*training=*/true));
//     auto vars = model.trainable_variables();
//     optimizer.apply_gradients(tape.gradient(loss, vars), vars);
//   }
//   std::cout << model(x).slice(0, 3) << "\n";   // prints like numpy
//
// The umbrella header: includes the whole public API.
#pragma once

#include "framework/autograd/grad_mode.h"
#include "framework/backend/backend.h"
#include "framework/backend/kernel_params.h"
#include "framework/core/device.h"
#include "framework/core/dtype.h"
#include "framework/core/error.h"
#include "framework/core/random.h"
#include "framework/core/shape.h"
#include "framework/core/tensor.h"
#include "framework/core/threading.h"
#include "framework/ops/creation.h"
#include "framework/ops/math_ops.h"
#include "framework/ops/nn_ops.h"
#include "framework/ops/shape_ops.h"
#include "framework/optimizers/optimizers.h"
#include "framework/losses/losses.h"
#include "framework/model/layer.h"
#include "framework/model/sequential.h"
#include "framework/variables/creator_stack.h"
#include "framework/variables/initializers.h"
#include "framework/variables/variable.h"
#include "layers/dense.h"
